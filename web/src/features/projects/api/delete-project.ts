import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api } from '@/lib/api-client'
import { sharedKeys } from '@/lib/query-keys'
import { projectKeys } from './keys'

export async function deleteProject(id: string): Promise<void> {
  await api.delete(`/api/projects/${encodeURIComponent(id)}`)
}

export function useDeleteProject(options: { onSuccess?: () => void } = {}) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: deleteProject,
    onSuccess: (_, id) => {
      queryClient.removeQueries({ queryKey: projectKeys.detail(id) })
      void queryClient.invalidateQueries({ queryKey: projectKeys.lists() })
      // Its deployments' files no longer count against the storage budget.
      void queryClient.invalidateQueries({ queryKey: sharedKeys.profile })
      toast.success('Project deleted successfully. Redirecting to projects...')
      options.onSuccess?.()
    },
    onError: () => {
      toast.error('Failed to delete project')
    },
  })
}
