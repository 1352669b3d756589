import { queryOptions, useQuery } from '@tanstack/react-query'
import { api, ApiError, isNotFound } from '@/lib/api-client'
import type { Project } from '../types'
import { projectKeys } from './keys'

/** One project, read from data.project (or data itself). */
export async function getProject(id: string, signal?: AbortSignal): Promise<Project> {
  const data = await api.get<{ project?: Project } & Partial<Project>>(
    `/api/projects/${encodeURIComponent(id)}`,
    { signal },
  )
  const project = data?.project ?? (data?._id ? (data as Project) : undefined)
  if (!project) throw new ApiError(404, 'Project not found')
  return project
}

export function projectQueryOptions(id: string) {
  return queryOptions({
    queryKey: projectKeys.detail(id),
    queryFn: ({ signal }) => getProject(id, signal),
    // A project that is not there (or not yours) will not appear on a retry.
    retry: (failures, err) => !isNotFound(err) && failures < 1,
    meta: { errorMessage: 'Failed to fetch project details' },
  })
}

export function useProject(id: string) {
  return useQuery(projectQueryOptions(id))
}
