import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import { sharedKeys } from '@/lib/query-keys'
import { projectKeys } from './keys'

/** Lets a pull request from a fork be built (its code will see the preview variables). */
export async function approvePullRequest(id: string, number: number): Promise<void> {
  await api.post(`/api/projects/${encodeURIComponent(id)}/pull-requests/${number}/approve`)
}

export function useApprovePullRequest(id: string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (number: number) => approvePullRequest(id, number),
    onSuccess: (_, number) => {
      toast.success(`Pull request #${number} approved: its preview is building`)
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to approve the pull request'))
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: projectKeys.github(id) })
      // Its preview deployment appears in the Previews list.
      void queryClient.invalidateQueries({ queryKey: sharedKeys.deployments })
    },
  })
}
