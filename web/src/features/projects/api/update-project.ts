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
}

export async function updateProject(id: string, input: ProjectUpdate): Promise<Project | undefined> {
  const data = await api.put<{ project?: Project }>(`/api/projects/${encodeURIComponent(id)}`, input)
  return data?.project
}

export function useUpdateProject(id: string, options: { onSuccess?: () => void } = {}) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (input: ProjectUpdate) => updateProject(id, input),
    onSuccess: (project) => {
      if (project) queryClient.setQueryData(projectKeys.detail(id), project)
      void queryClient.invalidateQueries({ queryKey: projectKeys.all })
      toast.success('Project updated successfully!')
      options.onSuccess?.()
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to update project'))
    },
  })
}
