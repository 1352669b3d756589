import type { ReactNode } from 'react'
import { RefreshCw, TriangleAlert } from 'lucide-react'
import { ApiError } from '@/lib/api-client'
import { Button } from './button'
import { ScreenState } from './screen-state'

/**
 * loadErrorDetail says what went wrong with a failed load: the server's
 * message when it sent one, else that the server could not be reached, else
 * the status it answered with.
 */
export function loadErrorDetail(err: unknown): string | undefined {
  if (err instanceof ApiError) {
    if (err.serverMessage) return err.serverMessage
    if (err.status === 0) return err.message
    return `The server answered with status ${err.status}.`
  }
  return err instanceof Error && err.message ? err.message : undefined
}

type LoadErrorStateProps = {
  /** What could not be loaded: "Could not load this project". */
  title: string
  error: unknown
  /** Fetches again; `retrying` is true while it runs. */
  onRetry: () => void
  retrying: boolean
  /** The way out besides retrying, e.g. back to the list. */
  back?: ReactNode
}

/** A screen whose data failed to load for another reason than not being there, with a Retry. */
export function LoadErrorState({ title, error, onRetry, retrying, back }: LoadErrorStateProps) {
  return (
    <ScreenState
      tone="danger"
      icon={TriangleAlert}
      title={title}
      description={loadErrorDetail(error)}
      action={
        <>
          <Button onClick={onRetry} loading={retrying} icon={<RefreshCw className="size-4" aria-hidden="true" />}>
            {retrying ? 'Retrying...' : 'Retry'}
          </Button>
          {back}
        </>
      }
    />
  )
}
