import { queryOptions, useQuery } from '@tanstack/react-query'
import { DEPLOYMENT_REFETCH_MS, PROJECT_DEPLOYMENTS_IDLE_REFETCH_MS } from '@/config/constants'
import { api } from '@/lib/api-client'
import { inProgress } from '../status'
import type { Deployment, DeploymentTarget } from '../types'
import { deploymentKeys } from './keys'

/** Narrows the list to one project's deployments and/or one target. */
export type DeploymentsFilter = { projectId?: string; target?: DeploymentTarget }

export async function getDeployments(filter: DeploymentsFilter = {}, signal?: AbortSignal): Promise<Deployment[]> {
  const data = await api.get<{ deployments?: Deployment[] } | undefined>('/api/deployments', {
    signal,
    params: { projectId: filter.projectId, target: filter.target },
  })
  return data?.deployments ?? []
}

export function deploymentsQueryOptions(filter?: DeploymentsFilter) {
  return queryOptions({
    queryKey: filter ? deploymentKeys.list(filter) : deploymentKeys.lists(),
    queryFn: ({ signal }) => getDeployments(filter, signal),
    meta: { errorMessage: 'Failed to fetch deployments' },
    // Refresh while anything is still on its way; a project's list also now and then, for
    // the deployments that pushes and hooks start.
    refetchInterval: (query) =>
      query.state.data?.some((d) => inProgress(d.status))
        ? DEPLOYMENT_REFETCH_MS
        : filter?.projectId
          ? PROJECT_DEPLOYMENTS_IDLE_REFETCH_MS
          : false,
  })
}

/** Every deployment of the user, or those `filter` keeps. */
export function useDeployments(filter?: DeploymentsFilter) {
  return useQuery(deploymentsQueryOptions(filter))
}
