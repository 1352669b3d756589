import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api } from '@/lib/api-client'
import type { Project } from '../types'
import { projectKeys } from './keys'

/** Fetches the branch's latest commit. */
export async function syncProject(id: string): Promise<Project | undefined> {
  const data = await api.post<{ project?: Project }>(`/api/projects/${encodeURIComponent(id)}/sync`)
  return data?.project
}

export function useSyncProject() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: syncProject,
    onSuccess: () => {
      toast.success('Project synced successfully')
      void queryClient.invalidateQueries({ queryKey: projectKeys.all })
    },
    onError: () => {
      toast.error('Failed to sync project')
    },
  })
}
