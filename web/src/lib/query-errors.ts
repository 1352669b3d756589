// Failed queries are toasted in one place: the QueryCache of app/provider.tsx
// calls toastQueryError once for every fetch that failed (after its retries),
// whichever screens observe the query. Each query names its toast in
// `meta.errorMessage` (the SPEC §8 text, kept beside its fetcher); a query
// without one fails quietly, and its screen shows what it shows.
import type { Query } from '@tanstack/react-query'
import toast from 'react-hot-toast'

declare module '@tanstack/react-query' {
  interface Register {
    queryMeta: {
      /** The error toast of a failed fetch of this query; none: no toast. */
      errorMessage?: string
    }
  }
}

/**
 * toastQueryError shows the query's `meta.errorMessage` as an error toast.
 * The toast's id is the query's, so a query that fails again while its toast
 * is up renews that toast rather than stacking a second one.
 */
export function toastQueryError(_error: unknown, query: Pick<Query, 'meta' | 'queryHash'>): void {
  const message = query.meta?.errorMessage
  if (message) toast.error(message, { id: query.queryHash })
}
