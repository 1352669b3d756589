import { useId, type ReactNode, type SelectHTMLAttributes } from 'react'
import { ChevronDown } from 'lucide-react'
import { cn } from '@/lib/cn'

type SelectProps = Omit<SelectHTMLAttributes<HTMLSelectElement>, 'id'> & {
  label: ReactNode
  /** Keeps the label for screen readers only. */
  hideLabel?: boolean
  /** Label and field side by side (toolbars) instead of stacked (forms). */
  inline?: boolean
  options: ReadonlyArray<{ value: string; label: string }>
}

/** A native select with its label. */
export function Select({ label, hideLabel, inline, options, className, ...props }: SelectProps) {
  const id = useId()
  return (
    <div className={cn(inline ? 'inline-flex items-center gap-2' : 'block', className)}>
      <label
        htmlFor={id}
        className={cn(
          'text-sm font-medium text-zinc-700 dark:text-zinc-300',
          hideLabel && 'sr-only',
          !inline && 'mb-1.5 block',
        )}
      >
        {label}
      </label>
      <div className="relative">
        <select
          id={id}
          className={cn(
            'block h-8 w-full appearance-none rounded-lg border border-zinc-300 bg-white py-1 pr-8 pl-2.5 text-sm text-zinc-900 shadow-xs',
            'focus:outline-2 focus:outline-offset-0 focus:outline-indigo-500',
            'dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100',
          )}
          {...props}
        >
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
        <ChevronDown
          className="pointer-events-none absolute top-1/2 right-2 size-4 -translate-y-1/2 text-zinc-500"
          aria-hidden="true"
        />
      </div>
    </div>
  )
}
