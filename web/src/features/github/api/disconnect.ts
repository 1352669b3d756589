import { useMutation } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import { useAuth } from '@/lib/auth'
import type { User } from '@/types/api'
import { githubKeys } from './keys'

/** POST /api/auth/github/disconnect: forgets the GitHub token and repositories. */
export async function disconnectGitHub(): Promise<User | undefined> {
  const data = await api.post<{ user?: User }>('/api/auth/github/disconnect')
  return data?.user
}

/** Disconnects GitHub and updates the session's user. */
export function useDisconnectGitHub(options: { onSuccess?: () => void } = {}) {
  const { user, setUser } = useAuth()
  return useMutation({
    mutationKey: githubKeys.disconnect(),
    mutationFn: disconnectGitHub,
    onSuccess: (next) => {
      if (next) setUser(next)
      else if (user) setUser({ ...user, github: { connected: false, username: '', avatar: '', repos: [] } })
      toast.success('GitHub account disconnected successfully')
      options.onSuccess?.()
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to disconnect GitHub account'))
    },
  })
}
