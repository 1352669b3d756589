import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import { projectKeys } from './keys'

/** Registers the project's GitHub webhook again (it was deleted on GitHub, or never made). */
export async function reconnectWebhook(id: string): Promise<void> {
  await api.post(`/api/projects/${encodeURIComponent(id)}/webhook`)
}

export function useReconnectWebhook(id: string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: () => reconnectWebhook(id),
    onSuccess: () => {
      toast.success('Webhook reconnected')
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to reconnect the webhook'))
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: projectKeys.github(id) })
    },
  })
}
