import { queryOptions, useQuery } from '@tanstack/react-query'
import { FEATURED_PROJECTS_LIMIT } from '@/config/constants'
import { api } from '@/lib/api-client'
import type { PublicDeployment } from '@/types/api'
import { discoverKeys } from './keys'

/**
 * The newest public deployments for the landing page. A failure is only
 * logged and gives an empty list (SPEC §8).
 */
export async function getFeaturedDeployments(
  limit: number = FEATURED_PROJECTS_LIMIT,
  signal?: AbortSignal,
): Promise<PublicDeployment[]> {
  try {
    const data = await api.get<{ deployments?: PublicDeployment[] }>('/api/deployments/public', {
      params: { limit, sort: 'recent' },
      signal,
    })
    return (data?.deployments ?? []).slice(0, limit)
  } catch (err) {
    if (signal?.aborted) throw err
    console.warn('Could not load featured projects:', err)
    return []
  }
}

export function featuredDeploymentsQueryOptions(limit: number = FEATURED_PROJECTS_LIMIT) {
  return queryOptions({
    queryKey: discoverKeys.featured(limit),
    queryFn: ({ signal }) => getFeaturedDeployments(limit, signal),
    staleTime: 60 * 1000,
  })
}

export function useFeaturedDeployments(limit: number = FEATURED_PROJECTS_LIMIT) {
  return useQuery(featuredDeploymentsQueryOptions(limit))
}
