import { useId, useState, type InputHTMLAttributes, type ReactNode, type Ref } from 'react'
import { Eye, EyeOff } from 'lucide-react'
import { cn } from '@/lib/cn'

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'id'> & {
  label: ReactNode
  /** The validation message shown under the field. */
  error?: string
  /** A hint shown under the field when there is no error. */
  hint?: ReactNode
  id?: string
  /** Something at the right end of the field (e.g. a show-password button). */
  trailing?: ReactNode
  ref?: Ref<HTMLInputElement>
}

export const fieldClasses =
  'block w-full rounded-lg border bg-white px-3 py-2 text-sm text-zinc-900 shadow-xs transition-colors ' +
  'placeholder:text-zinc-500 focus:outline-2 focus:outline-offset-0 focus:outline-indigo-500 ' +
  'disabled:cursor-not-allowed disabled:bg-zinc-50 disabled:text-zinc-500 ' +
  'dark:bg-zinc-900 dark:text-zinc-100 dark:placeholder:text-zinc-400 dark:disabled:bg-zinc-800/60'

/** A text field with its label, and its error or hint underneath. */
export function Input({ label, error, hint, id, className, trailing, ref, ...props }: InputProps) {
  const generated = useId()
  const inputId = id ?? generated
  const messageId = `${inputId}-message`
  const described = error || hint ? messageId : undefined
  return (
    <div className={className}>
      <label htmlFor={inputId} className="mb-1.5 block text-sm font-medium text-zinc-800 dark:text-zinc-200">
        {label}
      </label>
      <div className="relative">
        <input
          id={inputId}
          ref={ref}
          aria-invalid={error ? true : undefined}
          aria-describedby={described}
          className={cn(
            fieldClasses,
            trailing ? 'pr-10' : undefined,
            error
              ? 'border-red-500 focus:outline-red-500 dark:border-red-500'
              : 'border-zinc-300 dark:border-zinc-700',
          )}
          {...props}
        />
        {trailing ? <div className="absolute inset-y-0 right-0 flex items-center pr-1">{trailing}</div> : null}
      </div>
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

type PasswordInputProps = Omit<InputProps, 'type' | 'trailing'>

/** A password field with a show/hide toggle. */
export function PasswordInput(props: PasswordInputProps) {
  const [visible, setVisible] = useState(false)
  return (
    <Input
      {...props}
      type={visible ? 'text' : 'password'}
      trailing={
        <button
          type="button"
          onClick={() => setVisible((v) => !v)}
          aria-label={visible ? 'Hide password' : 'Show password'}
          aria-pressed={visible}
          className="rounded-md p-1.5 text-zinc-500 hover:bg-zinc-100 hover:text-zinc-800 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-100"
        >
          {visible ? <EyeOff className="size-4" aria-hidden="true" /> : <Eye className="size-4" aria-hidden="true" />}
        </button>
      }
    />
  )
}
