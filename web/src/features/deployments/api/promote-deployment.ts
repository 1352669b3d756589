import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import { sharedKeys } from '@/lib/query-keys'
import type { Deployment } from '../types'
import { deploymentKeys } from './keys'

/** Serves an earlier successful production deployment again, with no rebuild. */
export async function promoteDeployment(id: string): Promise<Deployment | undefined> {
  const data = await api.post<{ deployment?: Deployment }>(`/api/deployments/${encodeURIComponent(id)}/promote`)
  return data?.deployment
}

export const PROMOTED = 'Promoted to production'

export function usePromoteDeployment(options: { onSettled?: () => void } = {}) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: promoteDeployment,
    onSuccess: () => {
      toast.success(PROMOTED)
    },
    onError: (err) => {
      // A preview is refused (409) with the server's reason.
      toast.error(errorMessage(err, 'Failed to promote deployment'))
    },
    onSettled: () => {
      // The project's live deployment, its History, previews and the lists.
      void queryClient.invalidateQueries({ queryKey: deploymentKeys.all })
      void queryClient.invalidateQueries({ queryKey: sharedKeys.projects })
      options.onSettled?.()
    },
  })
}
