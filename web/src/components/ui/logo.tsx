import { cn } from '@/lib/cn'

/** The Gantry mark (a gantry crane lifting a box) and word. */
export function Logo({ className, showWord = true }: { className?: string; showWord?: boolean }) {
  return (
    <span className={cn('inline-flex items-center gap-2 font-semibold tracking-tight', className)}>
      <svg viewBox="0 0 32 32" className="size-7 shrink-0" aria-hidden="true">
        <rect width="32" height="32" rx="8" className="fill-indigo-600" />
        <path
          d="M9 24V9h14v15M9 13.5h14M16 13.5v4"
          fill="none"
          stroke="#fff"
          strokeWidth="2.5"
          strokeLinecap="round"
          strokeLinejoin="round"
        />
        <rect x="13" y="18.5" width="6" height="4.5" rx="1" fill="#fff" />
      </svg>
      {showWord ? <span className="text-lg text-zinc-900 dark:text-zinc-50">Gantry</span> : null}
    </span>
  )
}
