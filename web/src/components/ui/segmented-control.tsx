import type { ReactNode } from 'react'
import { cn } from '@/lib/cn'

type SegmentedControlProps<T extends string> = {
  /** Names the group for screen readers. */
  label: string
  value: T
  onChange: (value: T) => void
  options: ReadonlyArray<{ value: T; label: ReactNode; icon?: ReactNode }>
  /** On phones, split the full width evenly between the options (labels may wrap). */
  stretch?: boolean
  className?: string
}

/** A row of mutually exclusive buttons (filters, source tabs); the chosen one is pressed. */
export function SegmentedControl<T extends string>({
  label,
  value,
  onChange,
  options,
  stretch,
  className,
}: SegmentedControlProps<T>) {
  return (
    <div
      role="group"
      aria-label={label}
      className={cn(
        'max-w-full gap-1 rounded-lg border border-zinc-200 bg-zinc-100/80 p-1',
        stretch ? 'grid w-full auto-cols-fr grid-flow-col sm:inline-grid sm:w-auto' : 'inline-flex overflow-x-auto',
        'dark:border-zinc-800 dark:bg-zinc-900',
        className,
      )}
    >
      {options.map((o) => {
        const active = o.value === value
        return (
          <button
            key={o.value}
            type="button"
            aria-pressed={active}
            onClick={() => onChange(o.value)}
            className={cn(
              'inline-flex items-center justify-center gap-2 rounded-md px-3 py-1.5 text-sm font-medium transition-colors',
              stretch ? 'text-center sm:whitespace-nowrap' : 'shrink-0 whitespace-nowrap',
              'focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-indigo-500',
              active
                ? 'bg-white text-zinc-900 shadow-sm ring-1 ring-zinc-200 dark:bg-zinc-800 dark:text-zinc-50 dark:ring-zinc-700'
                : 'text-zinc-600 hover:bg-white/60 hover:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800/60 dark:hover:text-zinc-100',
            )}
          >
            {o.icon}
            {o.label}
          </button>
        )
      })}
    </div>
  )
}
