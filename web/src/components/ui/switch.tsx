import { useId, type ReactNode } from 'react'
import { cn } from '@/lib/cn'

export type SwitchProps = {
  checked: boolean
  onChange: (checked: boolean) => void
  label: ReactNode
  /** A one-line hint under the label, read out as the switch's description. */
  hint?: ReactNode
  disabled?: boolean
  className?: string
}

/** An on/off toggle with its label beside it (role "switch"). */
export function Switch({ checked, onChange, label, hint, disabled, className }: SwitchProps) {
  const labelId = useId()
  const hintId = useId()
  return (
    <span className={cn('inline-flex gap-2', hint ? 'items-start' : 'items-center', className)}>
      <button
        type="button"
        role="switch"
        aria-checked={checked}
        aria-labelledby={labelId}
        aria-describedby={hint ? hintId : undefined}
        disabled={disabled}
        onClick={() => onChange(!checked)}
        className={cn(
          'relative inline-flex h-5 w-9 shrink-0 items-center rounded-full transition-colors',
          'focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500 disabled:opacity-60',
          checked ? 'bg-indigo-600 dark:bg-indigo-500' : 'bg-zinc-400 dark:bg-zinc-600',
        )}
      >
        <span
          aria-hidden="true"
          className={cn(
            'inline-block size-4 rounded-full bg-white shadow-sm transition-transform',
            checked ? 'translate-x-4.5' : 'translate-x-0.5',
          )}
        />
      </button>
      <span className="min-w-0">
        <span
          id={labelId}
          className={cn(
            'block cursor-default text-sm text-zinc-700 select-none dark:text-zinc-300',
            hint ? 'font-medium text-zinc-900 dark:text-zinc-100' : undefined,
          )}
          onClick={() => !disabled && onChange(!checked)}
        >
          {label}
        </span>
        {hint ? (
          <span id={hintId} className="mt-0.5 block text-sm text-zinc-500 dark:text-zinc-400">
            {hint}
          </span>
        ) : null}
      </span>
    </span>
  )
}
