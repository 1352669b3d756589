import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api-client'
import type { BuildConfig, Project, Repository } from '../types'
import { projectKeys } from './keys'

/** POST /api/projects/public: a project from any public repository. */
export type PublicProjectInput = {
  repository: Repository
  name: string
  description: string
  branch: string
  buildConfig: BuildConfig
  framework: string
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
    const { repository, name, description, branch, buildConfig, framework } = input
    const data = await api.post<{ project: Project }>('/api/projects/public', {
      repository,
      name,
      description,
      branch,
      buildConfig,
      framework,
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
