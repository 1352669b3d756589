import { QueryObserver, type QueryClient } from '@tanstack/react-query'
import { waitFor } from '@testing-library/react'
import toast from 'react-hot-toast'
import { describe, expect, it, vi } from 'vitest'
import { createQueryClient } from '@/app/provider'

// Two observers of one query, as when two mounted screens read it.
function observeTwice(client: QueryClient, options: ConstructorParameters<typeof QueryObserver>[1]) {
  const unsubscribe = [new QueryObserver(client, options), new QueryObserver(client, options)].map((o) =>
    o.subscribe(() => {}),
  )
  return () => unsubscribe.forEach((u) => u())
}

describe('the query cache', () => {
  it("toasts a failed query's meta.errorMessage once per failure", async () => {
    const error = vi.spyOn(toast, 'error')
    const client = createQueryClient()
    const queryFn = vi.fn().mockRejectedValue(new Error('boom'))
    const stop = observeTwice(client, {
      queryKey: ['things'],
      queryFn,
      meta: { errorMessage: 'Failed to fetch things' },
      retryDelay: 0,
    })

    // The app's one retry, then one toast, however many observers.
    await waitFor(() => expect(error).toHaveBeenCalledTimes(1))
    expect(queryFn).toHaveBeenCalledTimes(2)
    expect(error).toHaveBeenCalledWith('Failed to fetch things', { id: '["things"]' })

    await client.refetchQueries({ queryKey: ['things'] })
    expect(error).toHaveBeenCalledTimes(2)
    stop()
  })

  it('toasts nothing for a query without meta', async () => {
    const error = vi.spyOn(toast, 'error')
    const client = createQueryClient()
    const queryFn = vi.fn().mockRejectedValue(new Error('boom'))
    const stop = observeTwice(client, { queryKey: ['quiet'], queryFn, retry: false })

    await waitFor(() => expect(client.getQueryState(['quiet'])?.status).toBe('error'))
    expect(queryFn).toHaveBeenCalledTimes(1)
    expect(error).not.toHaveBeenCalled()
    stop()
  })
})
