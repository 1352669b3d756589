import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import { useAuth } from '@/lib/auth'
import type { User } from '@/types/api'
import { profileKeys } from './keys'

export type ProfileInput = { fullName: string; username: string; email: string }

export async function updateProfile(input: ProfileInput): Promise<User> {
  const data = await api.put<{ user: User }>('/api/users/profile', input)
  return data.user
}

/** Saves the profile, refreshes the session's user, and says how it went. */
export function useUpdateProfile(options: { onSuccess?: (user: User) => void } = {}) {
  const queryClient = useQueryClient()
  const { setUser } = useAuth()
  return useMutation({
    mutationFn: updateProfile,
    onSuccess: (user) => {
      setUser(user)
      void queryClient.invalidateQueries({ queryKey: profileKeys.all })
      toast.success('Profile updated successfully')
      options.onSuccess?.(user)
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Profile update failed'))
    },
  })
}
