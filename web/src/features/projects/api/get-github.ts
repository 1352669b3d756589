import { queryOptions, useQuery } from '@tanstack/react-query'
import { api, isNotFound } from '@/lib/api-client'
import type { ProjectGitHub } from '../types'
import { projectKeys } from './keys'

/**
 * The webhook and pull requests of a project's GitHub repository; null for
 * a repository elsewhere (the server answers 404).
 */
export async function getProjectGitHub(id: string, signal?: AbortSignal): Promise<ProjectGitHub | null> {
  try {
    const data = await api.get<Partial<ProjectGitHub> | undefined>(`/api/projects/${encodeURIComponent(id)}/github`, {
      signal,
    })
    return { webhook: data?.webhook ?? null, pullRequests: data?.pullRequests ?? [], forkVariables: data?.forkVariables ?? [] }
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
}

export function projectGitHubQueryOptions(id: string) {
  return queryOptions({
    queryKey: projectKeys.github(id),
    queryFn: ({ signal }) => getProjectGitHub(id, signal),
    meta: { errorMessage: 'Failed to fetch the GitHub webhook status' },
  })
}

export function useProjectGitHub(id: string) {
  return useQuery(projectGitHubQueryOptions(id))
}
