import { useMutation } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, ApiError, errorMessage } from '@/lib/api-client'
import { useAuth } from '@/lib/auth'
import type { AuthResult, User } from '@/types/api'

export type RegisterInput = {
  username: string
  email: string
  password: string
  fullName: string
}

export function register(input: RegisterInput): Promise<AuthResult> {
  return api.post<AuthResult>('/api/auth/register', input)
}

/** The toast text of a failed registration (SPEC §8). */
export function registerErrorMessage(err: unknown): string {
  if (err instanceof ApiError && err.status === 429) {
    return 'Too many registration attempts. Please wait a few minutes before trying again.'
  }
  return errorMessage(err, 'Registration failed', true)
}

/** Creates the account, stores the session and welcomes the user. */
export function useRegister(options: { onSuccess?: (user: User) => void } = {}) {
  const { signIn } = useAuth()
  return useMutation({
    mutationFn: register,
    onSuccess: ({ token, user }) => {
      signIn(token, user)
      toast.success(`Welcome to Gantry, ${user.fullName || user.username}! Your account is ready.`)
      options.onSuccess?.(user)
    },
    onError: (err) => {
      toast.error(registerErrorMessage(err))
    },
  })
}
