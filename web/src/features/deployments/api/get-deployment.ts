import { queryOptions, useQuery } from '@tanstack/react-query'
import { DEPLOYMENT_REFETCH_MS } from '@/config/constants'
import { api, ApiError, isNotFound } from '@/lib/api-client'
import { inProgress } from '../status'
import type { Deployment } from '../types'
import { deploymentKeys } from './keys'

export async function getDeployment(id: string, signal?: AbortSignal): Promise<Deployment> {
  const data = await api.get<{ deployment?: Deployment }>(`/api/deployments/${encodeURIComponent(id)}`, {
    signal,
  })
  if (!data?.deployment) throw new ApiError(404, 'Deployment not found')
  return data.deployment
}

export function deploymentQueryOptions(id: string) {
  return queryOptions({
    queryKey: deploymentKeys.detail(id),
    queryFn: ({ signal }) => getDeployment(id, signal),
    retry: (failures, err) => !isNotFound(err) && failures < 1,
    meta: { errorMessage: 'Failed to fetch deployment details' },
    // Every 5 s while pending, building or deploying (SPEC §4, §9).
    refetchInterval: (query) =>
      query.state.data && inProgress(query.state.data.status) ? DEPLOYMENT_REFETCH_MS : false,
  })
}

export function useDeployment(id: string) {
  return useQuery(deploymentQueryOptions(id))
}
