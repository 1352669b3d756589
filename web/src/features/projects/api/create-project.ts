import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api-client'
import type { BuildConfig, Project, Repository } from '../types'
import { projectKeys } from './keys'

/**
 * POST /api/projects/public: a project from any public repository. Only the
 * repository's URL is sent: the server looks it up itself for everything
 * else (id, default branch, privacy, latest commit, framework).
 */
export type PublicProjectInput = {
  repository: Pick<Repository, 'url'>
  name: string
  description: string
  branch: string
  buildConfig: BuildConfig
}

/** POST /api/projects: a project from a repository of the connected GitHub account. */
export type GitHubProjectInput = {
  repositoryId: string | number
  name: string
  description: string
  branch: string
}

export type CreateProjectInput =
  | ({ source: 'public' } & PublicProjectInput)
  | ({ source: 'github' } & GitHubProjectInput)

export async function createProject(input: CreateProjectInput): Promise<Project> {
  if (input.source === 'public') {
    const { repository, name, description, branch, buildConfig } = input
    const data = await api.post<{ project: Project }>('/api/projects/public', {
      repository: { url: repository.url },
      name,
      description,
      branch,
      buildConfig,
    })
    return data.project
  }
  const { repositoryId, name, description, branch } = input
  const data = await api.post<{ project: Project }>('/api/projects', { repositoryId, name, description, branch })
  return data.project
}

/** Creates a project; the caller says how it went (it also starts a deployment). */
export function useCreateProject() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createProject,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: projectKeys.all })
    },
  })
}
