import { queryOptions, useQuery } from '@tanstack/react-query'
import { STORAGE_REFETCH_MS } from '@/config/constants'
import { api } from '@/lib/api-client'
import type { UserStats } from '@/types/api'
import { profileKeys } from './keys'

export async function getUserStats(signal?: AbortSignal): Promise<UserStats> {
  const data = await api.get<{ stats: UserStats }>('/api/users/stats', { signal })
  return data.stats
}

export function userStatsQueryOptions() {
  return queryOptions({
    queryKey: profileKeys.stats(),
    queryFn: ({ signal }) => getUserStats(signal),
  })
}

export function useUserStats() {
  return useQuery(userStatsQueryOptions())
}

/**
 * The same statistics for the sidebar's plan card, refreshed every minute:
 * a deployment's files count once its build ends, after the call that
 * started it.
 */
export function usePlanStorage() {
  return useQuery({ ...userStatsQueryOptions(), refetchInterval: STORAGE_REFETCH_MS })
}
