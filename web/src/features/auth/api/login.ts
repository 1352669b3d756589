import { useMutation } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, ApiError, errorMessage } from '@/lib/api-client'
import { useAuth } from '@/lib/auth'
import type { AuthResult, User } from '@/types/api'

export type LoginInput = { email: string; password: string }

export function login(input: LoginInput): Promise<AuthResult> {
  return api.post<AuthResult>('/api/auth/login', input)
}

/** The toast text of a failed login (SPEC §8). */
export function loginErrorMessage(err: unknown): string {
  if (err instanceof ApiError && err.status === 429) {
    return 'Too many login attempts. Please wait a few minutes before trying again.'
  }
  return errorMessage(err, 'Login failed', true)
}

/** Signs in, stores the session and says so; failures become toasts. */
export function useLogin(options: { onSuccess?: (user: User) => void } = {}) {
  const { signIn } = useAuth()
  return useMutation({
    mutationFn: login,
    onSuccess: ({ token, user }) => {
      signIn(token, user)
      toast.success('Login successful!')
      options.onSuccess?.(user)
    },
    onError: (err) => {
      toast.error(loginErrorMessage(err))
    },
  })
}
