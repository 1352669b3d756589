import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api-client'
import type { Project } from '../types'
import { projectKeys } from './keys'

/** The user's projects, read from data.projects (or projects). */
export async function getProjects(signal?: AbortSignal): Promise<Project[]> {
  const data = await api.get<{ projects?: Project[] } | undefined>('/api/projects', { signal })
  return data?.projects ?? []
}

export function projectsQueryOptions() {
  return queryOptions({
    queryKey: projectKeys.lists(),
    queryFn: ({ signal }) => getProjects(signal),
    meta: { errorMessage: 'Failed to fetch projects' },
  })
}

export function useProjects() {
  return useQuery(projectsQueryOptions())
}
