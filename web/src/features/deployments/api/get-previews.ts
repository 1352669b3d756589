import { queryOptions, useQuery } from '@tanstack/react-query'
import { DEPLOYMENT_REFETCH_MS, PROJECT_DEPLOYMENTS_IDLE_REFETCH_MS } from '@/config/constants'
import { api } from '@/lib/api-client'
import { inProgress } from '../status'
import type { Deployment } from '../types'
import { deploymentKeys } from './keys'

/** A project's preview deployments (branches and pull requests), newest first. */
export async function getPreviews(projectId: string, signal?: AbortSignal): Promise<Deployment[]> {
  const data = await api.get<{ previews?: Deployment[] } | undefined>(
    `/api/projects/${encodeURIComponent(projectId)}/previews`,
    { signal },
  )
  return data?.previews ?? []
}

export function previewsQueryOptions(projectId: string) {
  return queryOptions({
    queryKey: deploymentKeys.previews(projectId),
    queryFn: ({ signal }) => getPreviews(projectId, signal),
    meta: { errorMessage: 'Failed to fetch previews' },
    // Pushes and pull requests start previews at any time.
    refetchInterval: (query) =>
      query.state.data?.some((d) => inProgress(d.status)) ? DEPLOYMENT_REFETCH_MS : PROJECT_DEPLOYMENTS_IDLE_REFETCH_MS,
  })
}

export function usePreviews(projectId: string) {
  return useQuery(previewsQueryOptions(projectId))
}
