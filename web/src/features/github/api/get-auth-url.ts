import { useMutation } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, ApiError } from '@/lib/api-client'
import { githubKeys } from './keys'

/** GET /api/auth/github/url: the GitHub page that asks the user to authorize Gantry. */
export async function getAuthUrl(): Promise<string> {
  const data = await api.get<{ authUrl: string }>('/api/auth/github/url')
  return data.authUrl
}

/** Sends the browser to GitHub, where the user authorizes Gantry (SPEC §7). Tests spy on it. */
export const browserNavigation = {
  assign(url: string): void {
    window.location.assign(url)
  },
}

/**
 * Starts connecting GitHub: fetches the authorize URL and navigates to it.
 * A failure toasts "Failed to connect to GitHub"; when the server has no
 * OAuth app (503) its message is also handed to `onNotConfigured` so the
 * page can say so in place.
 */
export function useConnectGitHub(options: { onNotConfigured?: (message: string) => void } = {}) {
  return useMutation({
    mutationKey: githubKeys.connect(),
    mutationFn: getAuthUrl,
    onSuccess: (url) => browserNavigation.assign(url),
    onError: (err) => {
      if (err instanceof ApiError && err.status === 503 && err.serverMessage) {
        options.onNotConfigured?.(err.serverMessage)
      }
      toast.error('Failed to connect to GitHub')
    },
  })
}
