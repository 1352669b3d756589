// The session of SPEC §4. The token lives in localStorage under "token"; the
// current user is fetched at start and whenever the token changes; a failed
// check clears the token without a word. Login, registration and the GitHub
// callback call signIn / adoptToken; the layouts call signOut.
import {
  createContext,
  use,
  useCallback,
  useEffect,
  useMemo,
  useState,
  type ReactNode,
} from 'react'
import { queryOptions, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ApiError, getToken, setToken as storeToken } from '@/lib/api-client'
import type { User } from '@/types/api'

export const sessionKeys = {
  all: ['session'] as const,
  me: (token: string | null) => [...sessionKeys.all, 'me', token] as const,
}

export async function getMe(signal?: AbortSignal): Promise<User> {
  const data = await api.get<{ user: User }>('/api/auth/me', { signal })
  return data.user
}

export function meQueryOptions(token: string | null) {
  return queryOptions({
    queryKey: sessionKeys.me(token),
    queryFn: ({ signal }) => getMe(signal),
    enabled: token !== null,
    staleTime: 5 * 60 * 1000,
    // A rejected token is final; only a transient failure is worth a retry.
    retry: (failures, err) => !(err instanceof ApiError && err.status === 401) && failures < 1,
  })
}

export type SessionStatus = 'loading' | 'authenticated' | 'anonymous'

type AuthContextValue = {
  user: User | null
  status: SessionStatus
  /** True only while the session found at start-up is being checked. */
  initializing: boolean
  /** Stores the token and the user an auth answer returned. */
  signIn: (token: string, user: User) => void
  /** Stores a token received elsewhere (GitHub callback) and fetches its user. */
  adoptToken: (token: string) => Promise<User | null>
  /** Replaces the cached user, e.g. after a profile update. */
  setUser: (user: User) => void
  /** Forgets the token and every cached answer. */
  signOut: () => void
}

const AuthContext = createContext<AuthContextValue | null>(null)

export function AuthProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient()
  const [token, setTokenState] = useState<string | null>(getToken)
  const me = useQuery(meQueryOptions(token))

  const clearSession = useCallback(() => {
    storeToken(null)
    setTokenState(null)
    queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== sessionKeys.all[0] })
    queryClient.removeQueries({ queryKey: sessionKeys.all })
  }, [queryClient])

  // A failed current-user check clears the token silently.
  useEffect(() => {
    if (token !== null && me.isError) clearSession()
  }, [token, me.isError, clearSession])

  // A token rejected by any other call ends the session the same way.
  useEffect(() => {
    return queryClient.getQueryCache().subscribe((event) => {
      if (event.type !== 'updated' || event.action.type !== 'error') return
      if (event.query.queryKey[0] === sessionKeys.all[0]) return
      const err = event.action.error
      if (err instanceof ApiError && err.status === 401 && getToken() !== null) {
        void queryClient.invalidateQueries({ queryKey: sessionKeys.all })
      }
    })
  }, [queryClient])

  // Another tab signed in or out.
  useEffect(() => {
    const onStorage = (event: StorageEvent) => {
      if (event.key === null || event.key === 'token') setTokenState(getToken())
    }
    window.addEventListener('storage', onStorage)
    return () => window.removeEventListener('storage', onStorage)
  }, [])

  const signIn = useCallback(
    (next: string, user: User) => {
      storeToken(next)
      queryClient.setQueryData(sessionKeys.me(next), user)
      setTokenState(next)
    },
    [queryClient],
  )

  const adoptToken = useCallback(
    async (next: string) => {
      storeToken(next)
      setTokenState(next)
      try {
        return await queryClient.fetchQuery(meQueryOptions(next))
      } catch {
        return null
      }
    },
    [queryClient],
  )

  const setUser = useCallback(
    (user: User) => {
      queryClient.setQueryData(sessionKeys.me(token), user)
    },
    [queryClient, token],
  )

  const user = token !== null && me.data ? me.data : null
  const status: SessionStatus =
    token === null ? 'anonymous' : user ? 'authenticated' : me.isError ? 'anonymous' : 'loading'

  const [initialized, setInitialized] = useState(status !== 'loading')
  useEffect(() => {
    if (status !== 'loading') setInitialized(true)
  }, [status])
  const initializing = !initialized && status === 'loading'

  const value = useMemo<AuthContextValue>(
    () => ({ user, status, initializing, signIn, adoptToken, setUser, signOut: clearSession }),
    [user, status, initializing, signIn, adoptToken, setUser, clearSession],
  )
  return <AuthContext value={value}>{children}</AuthContext>
}

export function useAuth(): AuthContextValue {
  const ctx = use(AuthContext)
  if (!ctx) throw new Error('useAuth must be used inside <AuthProvider>')
  return ctx
}
