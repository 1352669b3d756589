import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api } from '@/lib/api-client'
import { sharedKeys } from '@/lib/query-keys'
import type { LogsPage } from './get-logs'
import { logKeys } from './keys'

export async function clearLogs(deploymentId: string): Promise<void> {
  await api.delete(`/api/deployments/${encodeURIComponent(deploymentId)}/logs`)
}

export function useClearLogs(deploymentId: string, options: { onSuccess?: () => void } = {}) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: () => clearLogs(deploymentId),
    onSuccess: () => {
      queryClient.setQueryData<LogsPage>(logKeys.list(deploymentId), { logs: [], total: 0 })
      // Cleared log text no longer counts against the storage budget.
      void queryClient.invalidateQueries({ queryKey: sharedKeys.profile })
      toast.success('Logs cleared successfully')
      options.onSuccess?.()
    },
    onError: () => {
      toast.error('Failed to clear logs')
    },
  })
}
