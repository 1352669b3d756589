import { cn } from '@/lib/cn'

/** A grey placeholder block shown while content loads. */
export function Skeleton({ className }: { className?: string }) {
  return (
    <div
      aria-hidden="true"
      className={cn('rounded-md bg-zinc-200/80 motion-safe:animate-pulse dark:bg-zinc-800', className)}
    />
  )
}
