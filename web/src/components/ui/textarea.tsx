import { useId, type ReactNode, type Ref, type TextareaHTMLAttributes } from 'react'
import { cn } from '@/lib/cn'
import { fieldClasses } from './input'

type TextareaProps = Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'id'> & {
  label: ReactNode
  error?: string
  hint?: ReactNode
  id?: string
  ref?: Ref<HTMLTextAreaElement>
}

/** A multi-line field with its label, hint and error, styled like Input. */
export function Textarea({ label, error, hint, id, className, ref, ...props }: TextareaProps) {
  const generated = useId()
  const inputId = id ?? generated
  const messageId = `${inputId}-message`
  return (
    <div className={className}>
      <label htmlFor={inputId} className="mb-1.5 block text-sm font-medium text-zinc-800 dark:text-zinc-200">
        {label}
      </label>
      <textarea
        id={inputId}
        ref={ref}
        aria-invalid={error ? true : undefined}
        aria-describedby={error || hint ? messageId : undefined}
        className={cn(
          fieldClasses,
          'min-h-20 resize-y',
          error ? 'border-red-500 dark:border-red-500' : 'border-zinc-300 dark:border-zinc-700',
        )}
        {...props}
      />
      {error ? (
        <p id={messageId} className="mt-1.5 text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      ) : hint ? (
        <p id={messageId} className="mt-1.5 text-sm text-zinc-500 dark:text-zinc-400">
          {hint}
        </p>
      ) : null}
    </div>
  )
}
