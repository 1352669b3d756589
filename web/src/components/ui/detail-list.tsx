import type { ReactNode } from 'react'
import { cn } from '@/lib/cn'

export type DetailItem = {
  label: string
  value: ReactNode
  /** Commands, hashes and URLs are set in monospace. */
  mono?: boolean
}

/** Label/value rows, for the information sections of detail pages. */
export function DetailList({ items, className }: { items: DetailItem[]; className?: string }) {
  return (
    <dl className={cn('divide-y divide-zinc-100 text-sm dark:divide-zinc-800', className)}>
      {items.map((item) => (
        <div key={item.label} className="grid grid-cols-[8.5rem_minmax(0,1fr)] gap-3 py-2.5 first:pt-0 last:pb-0">
          <dt className="text-zinc-500 dark:text-zinc-400">{item.label}</dt>
          <dd
            className={cn(
              'min-w-0 break-words text-zinc-900 dark:text-zinc-100',
              item.mono && 'font-mono text-[0.8125rem]',
            )}
          >
            {item.value}
          </dd>
        </div>
      ))}
    </dl>
  )
}

type StatTileProps = { label: string; value: ReactNode; icon?: ReactNode; mono?: boolean }

/** A small card with one figure (the three or four cards under a detail header). */
export function StatTile({ label, value, icon, mono }: StatTileProps) {
  return (
    <div className="min-w-0 rounded-xl border border-zinc-200 bg-white p-4 shadow-xs dark:border-zinc-800 dark:bg-zinc-900">
      <p className="flex items-center gap-2 text-xs font-medium text-zinc-500 dark:text-zinc-400">
        {icon}
        {label}
      </p>
      <div
        className={cn(
          'mt-1.5 truncate text-sm font-semibold text-zinc-900 dark:text-zinc-50',
          mono && 'font-mono font-medium',
        )}
      >
        {value}
      </div>
    </div>
  )
}
