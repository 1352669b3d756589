import type { ReactNode } from 'react'
import { RefreshCw, SearchX, TriangleAlert } from 'lucide-react'
import { ApiError, isNotFound } from '@/lib/api-client'
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
  /** What a 404 says: "Project not found". */
  notFoundTitle: string
  /** What any other failure says: "Could not load this project". */
  title: string
  /** The failure and its Retry (lib/use-retry.ts). */
  failure: { error: unknown; retry: () => void; retrying: boolean }
  /** The way back to the list: the one action of "not found", the second of a failure. */
  back: ReactNode
}

/**
 * The screen of a detail page whose data did not load: "not found" when the
 * server answered 404, else what went wrong with a Retry that reads
 * "Retrying..." while it runs.
 */
export function LoadErrorState({ notFoundTitle, title, failure, back }: LoadErrorStateProps) {
  if (isNotFound(failure.error)) {
    return (
      <ScreenState
        icon={SearchX}
        title={notFoundTitle}
        description="It may have been deleted, or it belongs to another account."
        action={back}
      />
    )
  }
  return (
    <ScreenState
      tone="danger"
      icon={TriangleAlert}
      title={title}
      description={loadErrorDetail(failure.error)}
      action={
        <>
          <Button
            onClick={failure.retry}
            loading={failure.retrying}
            icon={<RefreshCw className="size-4" aria-hidden="true" />}
          >
            {failure.retrying ? 'Retrying...' : 'Retry'}
          </Button>
          {back}
        </>
      }
    />
  )
}
