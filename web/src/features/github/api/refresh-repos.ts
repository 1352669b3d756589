import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import { sessionKeys, useAuth } from '@/lib/auth'
import type { GitHubRepo, User } from '@/types/api'
import { githubKeys } from './keys'

export type RefreshResult = { repos: GitHubRepo[]; user?: User }

/** POST /api/auth/github/refresh: lists the connected account's repositories again. */
export async function refreshRepos(): Promise<RefreshResult> {
  return api.post<RefreshResult>('/api/auth/github/refresh')
}

/**
 * Refreshes the repositories and the session's user. A failure (server
 * message preferred) refetches the user: a revoked token disconnects the
 * account on the server.
 */
export function useRefreshRepos() {
  const queryClient = useQueryClient()
  const { user, setUser } = useAuth()
  return useMutation({
    mutationKey: githubKeys.refresh(),
    mutationFn: refreshRepos,
    onSuccess: (data) => {
      if (data.user) setUser(data.user)
      else if (user) setUser({ ...user, github: { ...user.github, connected: true, repos: data.repos } })
      toast.success('GitHub repositories refreshed successfully')
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to refresh GitHub repositories'))
      void queryClient.invalidateQueries({ queryKey: sessionKeys.all })
    },
  })
}
