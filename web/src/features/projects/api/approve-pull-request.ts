import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import { sharedKeys } from '@/lib/query-keys'
import { projectKeys } from './keys'

/**
 * Lets commit sha, the head of a pull request from a fork that the owner
 * reviewed, be built (its code sees the preview-scoped variables). The
 * server refuses (409) when the pull request moved on since.
 */
export async function approvePullRequest(id: string, number: number, sha: string): Promise<void> {
  await api.post(`/api/projects/${encodeURIComponent(id)}/pull-requests/${number}/approve`, { sha })
}

export function useApprovePullRequest(id: string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: ({ number, sha }: { number: number; sha: string }) => approvePullRequest(id, number, sha),
    onSuccess: (_, { number }) => {
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
