import { useId, type InputHTMLAttributes, type ReactNode, type Ref } from 'react'
import { cn } from '@/lib/cn'

type CheckboxProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'type' | 'id'> & {
  label: ReactNode
  error?: string
  id?: string
  ref?: Ref<HTMLInputElement>
}

/** A checkbox with its label beside it and its error underneath. */
export function Checkbox({ label, error, id, className, ref, ...props }: CheckboxProps) {
  const generated = useId()
  const inputId = id ?? generated
  const messageId = `${inputId}-message`
  return (
    <div className={className}>
      <div className="flex items-start gap-2.5">
        <input
          id={inputId}
          ref={ref}
          type="checkbox"
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? messageId : undefined}
          className={cn(
            'mt-0.5 size-4 shrink-0 rounded border accent-indigo-600',
            error ? 'border-red-500' : 'border-zinc-300 dark:border-zinc-600',
          )}
          {...props}
        />
        <label htmlFor={inputId} className="text-sm text-zinc-700 dark:text-zinc-300">
          {label}
        </label>
      </div>
      {error ? (
        <p id={messageId} className="mt-1.5 text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      ) : null}
    </div>
  )
}
