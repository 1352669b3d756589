import { useMutation } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'

export type ChangePasswordInput = { currentPassword: string; newPassword: string }

export function changePassword(input: ChangePasswordInput): Promise<void> {
  return api.put<void>('/api/auth/change-password', input)
}

/** Changes the password; success and failure become toasts (SPEC §8). */
export function useChangePassword(options: { onSuccess?: () => void } = {}) {
  return useMutation({
    mutationFn: changePassword,
    onSuccess: () => {
      toast.success('Password changed successfully')
      options.onSuccess?.()
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Password change failed'))
    },
  })
}
