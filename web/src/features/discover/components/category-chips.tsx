import { cn } from '@/lib/cn'
import type { DiscoverCategory } from '../types'

/** The chips of SPEC §2 Discover, in order. */
export const CATEGORY_CHIPS: ReadonlyArray<{ value: DiscoverCategory; label: string }> = [
  { value: 'all', label: 'All Apps' },
  { value: 'frontend', label: 'Frontend' },
  { value: 'backend', label: 'Backend' },
  { value: 'static', label: 'Static Sites' },
]

type CategoryChipsProps = {
  value: DiscoverCategory
  counts: Record<DiscoverCategory, number>
  onChange: (value: DiscoverCategory) => void
}

/** The category filter: one toggle button per category, with its count under the search. */
export function CategoryChips({ value, counts, onChange }: CategoryChipsProps) {
  return (
    <div role="group" aria-label="Categories" className="flex flex-wrap gap-2">
      {CATEGORY_CHIPS.map((chip) => {
        const active = chip.value === value
        return (
          <button
            key={chip.value}
            type="button"
            aria-pressed={active}
            onClick={() => onChange(chip.value)}
            className={cn(
              'inline-flex h-8 items-center gap-2 rounded-full border px-3 text-sm font-medium transition-colors',
              'focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500',
              active
                ? 'border-indigo-600 bg-indigo-600 text-white dark:border-indigo-500 dark:bg-indigo-500'
                : 'border-zinc-300 bg-white text-zinc-700 hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-300 dark:hover:bg-zinc-800',
            )}
          >
            {chip.label}
            <span
              className={cn(
                'rounded-full px-1.5 text-xs tabular-nums',
                active ? 'bg-white/20 text-white' : 'bg-zinc-100 text-zinc-600 dark:bg-zinc-800 dark:text-zinc-400',
              )}
            >
              {counts[chip.value].toLocaleString('en-US')}
            </span>
          </button>
        )
      })}
    </div>
  )
}
