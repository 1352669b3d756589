import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import { domainKeys } from './keys'

/** Removes a custom domain; the platform stops serving it at once. */
export async function removeDomain(projectId: string, domainId: string): Promise<void> {
  await api.delete(`/api/projects/${encodeURIComponent(projectId)}/domains/${encodeURIComponent(domainId)}`)
}

export function useRemoveDomain(projectId: string, options: { onSuccess?: () => void } = {}) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (domainId: string) => removeDomain(projectId, domainId),
    onSuccess: () => {
      toast.success('Domain removed')
      options.onSuccess?.()
      return queryClient.invalidateQueries({ queryKey: domainKeys.list(projectId) })
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to remove the domain'))
    },
  })
}
