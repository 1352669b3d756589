import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import type { BuildConfig, Project } from '../types'
import { projectKeys } from './keys'

export type ProjectUpdate = {
  name: string
  description: string
  branch: string
  buildConfig: BuildConfig
  showInDiscover?: boolean
  autoDeploy?: boolean
  watchCommits?: boolean
  alwaysOn?: boolean
}

/** PUT /api/projects/{id}: any of the fields a user may set. */
export async function updateProject(id: string, input: Partial<ProjectUpdate>): Promise<Project | undefined> {
  const data = await api.put<{ project?: Project }>(`/api/projects/${encodeURIComponent(id)}`, input)
  return data?.project
}

function useProjectSaved(id: string) {
  const queryClient = useQueryClient()
  return (project: Project | undefined) => {
    if (project) queryClient.setQueryData(projectKeys.detail(id), project)
    void queryClient.invalidateQueries({ queryKey: projectKeys.all })
    // Discover's lists (the discover feature's key root) follow a project's listing and name.
    void queryClient.invalidateQueries({ queryKey: ['discover'] })
  }
}

export function useUpdateProject(id: string, options: { onSuccess?: () => void } = {}) {
  const saved = useProjectSaved(id)
  return useMutation({
    mutationFn: (input: ProjectUpdate) => updateProject(id, input),
    onSuccess: (project) => {
      saved(project)
      toast.success('Project updated successfully!')
      options.onSuccess?.()
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to update project'))
    },
  })
}

export const SHOWN_IN_DISCOVER = 'Your app is now listed in Discover'
export const HIDDEN_FROM_DISCOVER = 'Your app is no longer listed in Discover'

/** Turns a project's "Show in Discover" on or off at once (the detail screen's switch). */
export function useShowInDiscover(id: string) {
  const saved = useProjectSaved(id)
  return useMutation({
    mutationFn: (show: boolean) => updateProject(id, { showInDiscover: show }),
    onSuccess: (project, show) => {
      saved(project)
      toast.success(show ? SHOWN_IN_DISCOVER : HIDDEN_FROM_DISCOVER)
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to update project'))
    },
  })
}

/** The Git card's switches: what starts deployments on its own. */
export type GitSettings = Pick<ProjectUpdate, 'autoDeploy' | 'watchCommits'>

export function gitSettingSaved(change: GitSettings): string {
  if (change.autoDeploy !== undefined) return change.autoDeploy ? 'Auto-deploy turned on' : 'Auto-deploy turned off'
  return change.watchCommits ? 'Watching the branch for new commits' : 'No longer watching for new commits'
}

/** Turns Auto-deploy or "Watch for new commits" on or off at once. */
export function useUpdateGitSettings(id: string) {
  const saved = useProjectSaved(id)
  return useMutation({
    mutationFn: (change: GitSettings) => updateProject(id, change),
    onSuccess: (project, change) => {
      saved(project)
      toast.success(gitSettingSaved(change))
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to update project'))
    },
  })
}

export const ALWAYS_ON_SET = 'Your app now stays on'
export const ALWAYS_ON_UNSET = 'Your app now sleeps when unused'

/** Turns a project's "Always on" on or off at once (the detail screen's switch); the free plan is refused. */
export function useAlwaysOn(id: string) {
  const saved = useProjectSaved(id)
  return useMutation({
    mutationFn: (on: boolean) => updateProject(id, { alwaysOn: on }),
    onSuccess: (project, on) => {
      saved(project)
      toast.success(on ? ALWAYS_ON_SET : ALWAYS_ON_UNSET)
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to update project'))
    },
  })
}
