import { Link, isRouteErrorResponse, useRouteError } from 'react-router'
import { TriangleAlert } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { paths } from '@/config/paths'

/** Shown when a screen throws while rendering. */
export function RouteError() {
  const error = useRouteError()
  console.error(error)
  const detail = isRouteErrorResponse(error) ? `${error.status} ${error.statusText}` : null
  return (
    <div className="flex min-h-dvh flex-col items-center justify-center px-4 text-center">
      <title>Something went wrong · Gantry</title>
      <div className="flex size-12 items-center justify-center rounded-full bg-red-50 text-red-600 dark:bg-red-500/15 dark:text-red-400">
        <TriangleAlert className="size-6" aria-hidden="true" />
      </div>
      <h1 className="mt-4 text-xl font-semibold text-zinc-900 dark:text-zinc-50">Something went wrong</h1>
      <p className="mt-2 max-w-sm text-sm text-zinc-600 dark:text-zinc-400">
        This screen hit an unexpected error{detail ? ` (${detail})` : ''}. Reloading usually helps.
      </p>
      <div className="mt-6 flex gap-3">
        <button type="button" className={buttonClasses()} onClick={() => window.location.reload()}>
          Reload
        </button>
        <Link to={paths.home.getHref()} className={buttonClasses({ variant: 'secondary' })}>
          Go home
        </Link>
      </div>
    </div>
  )
}
