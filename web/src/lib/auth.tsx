// The session of SPEC §4. The token lives in localStorage under "token"; the
// current user is fetched at start and whenever the token changes; a failed
// check clears the token without a word. Login, registration and the GitHub
// callback call signIn / adoptToken; the layouts call signOut, which ends the
// session on the server too; "Sign out everywhere" calls forgetSession once
// the server has ended every session.
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
import { paths } from '@/config/paths'
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

/** How long Sign out waits for the server before forgetting the token anyway. */
export const LOGOUT_TIMEOUT_MS = 5000

/**
 * endServerSession asks the server to end the session of the stored token
 * (POST /api/auth/logout). It never throws: the token is forgotten whatever
 * the answer, and a failure here must not keep anyone signed in.
 */
export async function endServerSession(): Promise<void> {
  if (getToken() === null) return
  try {
    await api.post<unknown>('/api/auth/logout', undefined, { signal: AbortSignal.timeout(LOGOUT_TIMEOUT_MS) })
  } catch {
    // Already ended, offline or slow: the local sign-out goes on.
  }
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
  /**
   * Ends the session on the server (POST /api/auth/logout), then forgets the
   * token and every cached answer, even when the server call failed.
   */
  signOut: () => Promise<void>
  /**
   * Forgets the token and every cached answer, without calling the server
   * (which has already ended the session). `redirectTo` is where the
   * logged-in-only screen on view sends the user, instead of /.
   */
  forgetSession: (options?: { redirectTo?: string }) => void
  /** Where logged-in-only screens send a visitor after forgetSession (null: /). */
  signedOutTo: string | null
}

const AuthContext = createContext<AuthContextValue | null>(null)

export function AuthProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient()
  const [token, setTokenState] = useState<string | null>(getToken)
  const me = useQuery(meQueryOptions(token))

  const [signedOutTo, setSignedOutTo] = useState<string | null>(null)

  const clearSession = useCallback(() => {
    storeToken(null)
    setTokenState(null)
    queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== sessionKeys.all[0] })
    queryClient.removeQueries({ queryKey: sessionKeys.all })
  }, [queryClient])

  // A failed current-user check clears the token silently. When the token
  // had worked in this tab (its session was ended elsewhere: signed out
  // everywhere, a password change, expiry), the screen on view goes to the
  // sign-in page; a token that never worked here leads to / as for any
  // visitor.
  const hadUser = me.data !== undefined
  useEffect(() => {
    if (token !== null && me.isError) {
      setSignedOutTo(hadUser ? paths.login.getHref() : null)
      clearSession()
    }
  }, [token, me.isError, hadUser, clearSession])

  // A token rejected by any other call (a query or an action) makes the
  // current-user check run again, which ends the session the same way.
  useEffect(() => {
    const recheck = (err: unknown) => {
      if (err instanceof ApiError && err.status === 401 && getToken() !== null) {
        void queryClient.invalidateQueries({ queryKey: sessionKeys.all })
      }
    }
    const unsubscribeQueries = queryClient.getQueryCache().subscribe((event) => {
      if (event.type !== 'updated' || event.action.type !== 'error') return
      if (event.query.queryKey[0] === sessionKeys.all[0]) return
      recheck(event.action.error)
    })
    const unsubscribeMutations = queryClient.getMutationCache().subscribe((event) => {
      if (event.type === 'updated' && event.action.type === 'error') recheck(event.action.error)
    })
    return () => {
      unsubscribeQueries()
      unsubscribeMutations()
    }
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
      setSignedOutTo(null)
      setTokenState(next)
    },
    [queryClient],
  )

  const adoptToken = useCallback(
    async (next: string) => {
      storeToken(next)
      setSignedOutTo(null)
      setTokenState(next)
      try {
        return await queryClient.fetchQuery(meQueryOptions(next))
      } catch {
        return null
      }
    },
    [queryClient],
  )

  const signOut = useCallback(async () => {
    await endServerSession()
    clearSession()
  }, [clearSession])

  const forgetSession = useCallback(
    (options: { redirectTo?: string } = {}) => {
      // Set in the same render as the token, so that the screen on view
      // redirects there rather than to /.
      setSignedOutTo(options.redirectTo ?? null)
      clearSession()
    },
    [clearSession],
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
    () => ({ user, status, initializing, signIn, adoptToken, setUser, signOut, forgetSession, signedOutTo }),
    [user, status, initializing, signIn, adoptToken, setUser, signOut, forgetSession, signedOutTo],
  )
  return <AuthContext value={value}>{children}</AuthContext>
}

export function useAuth(): AuthContextValue {
  const ctx = use(AuthContext)
  if (!ctx) throw new Error('useAuth must be used inside <AuthProvider>')
  return ctx
}
