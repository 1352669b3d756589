import { useMutation } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'

export type LogoutAllResult = { ended: number }

/** Ends every session of the account, this one included (POST /api/auth/logout-all). */
export function logoutAll(): Promise<LogoutAllResult> {
  return api.post<LogoutAllResult>('/api/auth/logout-all')
}

/**
 * Signs the account out everywhere. On success the caller forgets the local
 * session (the server has already ended it); a failure becomes a toast and
 * leaves everything as it was.
 */
export function useLogoutAll(options: { onSuccess?: (result: LogoutAllResult) => void } = {}) {
  return useMutation({
    mutationFn: logoutAll,
    onSuccess: (result) => {
      toast.success('Signed out everywhere')
      options.onSuccess?.(result)
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to sign out everywhere', true))
    },
  })
}
