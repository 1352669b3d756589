import { queryOptions, useQuery } from '@tanstack/react-query'
import { DEPLOYMENT_REFETCH_MS } from '@/config/constants'
import { api } from '@/lib/api-client'
import { inProgress } from '../status'
import type { Deployment } from '../types'
import { deploymentKeys } from './keys'

export async function getDeployments(signal?: AbortSignal): Promise<Deployment[]> {
  const data = await api.get<{ deployments?: Deployment[] } | undefined>('/api/deployments', { signal })
  return data?.deployments ?? []
}

export function deploymentsQueryOptions() {
  return queryOptions({
    queryKey: deploymentKeys.lists(),
    queryFn: ({ signal }) => getDeployments(signal),
    meta: { errorMessage: 'Failed to fetch deployments' },
    // Refresh while anything is still on its way.
    refetchInterval: (query) =>
      query.state.data?.some((d) => inProgress(d.status)) ? DEPLOYMENT_REFETCH_MS : false,
  })
}

export function useDeployments() {
  return useQuery(deploymentsQueryOptions())
}
