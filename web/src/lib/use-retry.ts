import { useState } from 'react'

type Refetchable = { error: unknown; refetch: () => Promise<unknown> }

/**
 * useRetry runs a failed query again from its screen's Retry button. A query
 * that has no data goes back to pending when it fetches again, and forgets its
 * error, so the screen would trade its error state for its skeleton: while the
 * retry runs, `retrying` is true and `error` is still the failure being retried.
 */
export function useRetry(query: Refetchable) {
  const [retried, setRetried] = useState<{ error: unknown } | null>(null)
  return {
    retry: () => {
      setRetried({ error: query.error })
      void query.refetch().finally(() => setRetried(null))
    },
    retrying: retried !== null,
    error: retried ? retried.error : query.error,
  }
}
