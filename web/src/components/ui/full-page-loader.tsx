import { Spinner } from './spinner'

/** Shown while the session is being checked, so no screen or redirect flashes. */
export function FullPageLoader() {
  return (
    <div className="flex min-h-dvh items-center justify-center text-zinc-400 dark:text-zinc-500">
      <Spinner className="size-6" label="Loading" />
    </div>
  )
}
