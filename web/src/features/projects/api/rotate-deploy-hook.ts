import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import type { Project } from '../types'
import { projectKeys } from './keys'

/** Replaces the deploy hook URL; the old one stops working. */
export async function rotateDeployHook(id: string): Promise<Project | undefined> {
  const data = await api.post<{ project?: Project }>(`/api/projects/${encodeURIComponent(id)}/deploy-hook`)
  return data?.project
}

export const HOOK_ROTATED = 'Deploy hook rotated: the old URL no longer works'

export function useRotateDeployHook(id: string, options: { onSettled?: () => void } = {}) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: () => rotateDeployHook(id),
    onSuccess: (project) => {
      if (project) queryClient.setQueryData(projectKeys.detail(id), project)
      void queryClient.invalidateQueries({ queryKey: projectKeys.detail(id) })
      toast.success(HOOK_ROTATED)
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to rotate the deploy hook'))
    },
    onSettled: () => options.onSettled?.(),
  })
}
