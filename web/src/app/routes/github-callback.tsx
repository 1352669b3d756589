import { useEffect, useRef, useState } from 'react'
import { useNavigate, useSearchParams } from 'react-router'
import { CheckCircle2, XCircle } from 'lucide-react'
import { Card } from '@/components/ui/card'
import { Logo } from '@/components/ui/logo'
import { Spinner } from '@/components/ui/spinner'
import { GITHUB_ERROR_REDIRECT_MS, GITHUB_SUCCESS_REDIRECT_MS } from '@/config/constants'
import { paths } from '@/config/paths'
import { api, errorMessage } from '@/lib/api-client'
import { useAuth } from '@/lib/auth'
import type { User } from '@/types/api'

type State =
  | { kind: 'processing' }
  | { kind: 'success'; message: string; redirectTo: string; delay: number }
  | { kind: 'error'; message: string; detail?: string; redirectTo: string; delay: number }

const FAILED = 'GitHub authentication failed. Please try again.'
const NO_CODE = 'GitHub sent no authorization back. Please try again.'

/** What the server's short error codes mean, shown under the SPEC's message. */
const ERROR_DETAILS: Record<string, string> = {
  access_denied: 'Authorization was cancelled on GitHub.',
  already_linked: 'This GitHub account is already connected to another Gantry account.',
  expired_state: 'The sign-in took longer than 10 minutes.',
  state_mismatch: 'The sign-in was started in another browser or tab.',
  not_configured: 'GitHub is not configured on this server.',
  github_unavailable: 'GitHub could not be reached.',
}

/**
 * /github-callback?code=&state= (or ?error=): where GitHub's sign-in lands
 * (SPEC §2, §4). The page takes code and state out of the address bar and
 * the history entry at once, then finishes the sign-in with
 * POST /api/auth/github/callback: the server links the account only for
 * the session (this browser's bearer token and nonce cookie) that started
 * it, so a sign-in planted from elsewhere cannot link this user's GitHub
 * account to another Gantry account. Success refreshes the user and goes to
 * the dashboard after 2 s; an error goes to the GitHub integration page
 * after 3 s, with the server's reason (or the short code's meaning) under
 * the SPEC's message.
 */
export function GitHubCallbackRoute() {
  const [params] = useSearchParams()
  const navigate = useNavigate()
  const { setUser } = useAuth()
  const [state, setState] = useState<State>({ kind: 'processing' })
  const started = useRef(false)

  useEffect(() => {
    if (started.current) return
    started.current = true
    const code = params.get('code')
    const oauthState = params.get('state')
    const error = params.get('error')

    // Code and state have been read: take them out of the address bar and
    // of this history entry at once (the browser's own history API, before
    // anything else runs), then tell the router.
    if (code || oauthState) {
      const here = new URL(window.location.href)
      here.searchParams.delete('code')
      here.searchParams.delete('state')
      window.history.replaceState(window.history.state, '', here.pathname + here.search + here.hash)
      const rest = new URLSearchParams(params)
      rest.delete('code')
      rest.delete('state')
      const search = rest.toString()
      void navigate({ search: search ? `?${search}` : '' }, { replace: true })
    }

    const fail = (message: string, detail?: string) =>
      setState({
        kind: 'error',
        message,
        detail,
        redirectTo: paths.githubIntegration.getHref(),
        delay: GITHUB_ERROR_REDIRECT_MS,
      })

    if (error) return fail(FAILED, ERROR_DETAILS[error])
    if (!code || !oauthState) return fail(NO_CODE)

    api
      .post<{ user: User }>('/api/auth/github/callback', { code, state: oauthState })
      .then(({ user }) => {
        setUser(user)
        setState({
          kind: 'success',
          message: 'GitHub account linked successfully! Redirecting...',
          redirectTo: paths.dashboard.getHref(),
          delay: GITHUB_SUCCESS_REDIRECT_MS,
        })
      })
      .catch((err: unknown) => fail(FAILED, errorMessage(err, '', true) || undefined))
  }, [params, setUser, navigate])

  useEffect(() => {
    if (state.kind === 'processing') return
    const timer = window.setTimeout(() => navigate(state.redirectTo, { replace: true }), state.delay)
    return () => window.clearTimeout(timer)
  }, [state, navigate])

  return (
    <div className="flex min-h-dvh flex-col items-center justify-center px-4">
      <title>Connecting GitHub · Gantry</title>
      <Logo className="mb-8" />
      <Card className="w-full max-w-sm p-8 text-center" role="status" aria-live="polite">
        {state.kind === 'processing' ? (
          <>
            <Spinner className="mx-auto size-8 text-indigo-600 dark:text-indigo-400" />
            <h1 className="mt-4 text-lg font-semibold text-zinc-900 dark:text-zinc-50">Connecting your GitHub account…</h1>
            <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">This takes just a moment.</p>
          </>
        ) : state.kind === 'success' ? (
          <>
            <CheckCircle2 className="mx-auto size-10 text-emerald-500" aria-hidden="true" />
            <h1 className="mt-4 text-lg font-semibold text-zinc-900 dark:text-zinc-50">All set</h1>
            <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{state.message}</p>
          </>
        ) : (
          <>
            <XCircle className="mx-auto size-10 text-red-500" aria-hidden="true" />
            <h1 className="mt-4 text-lg font-semibold text-zinc-900 dark:text-zinc-50">Something went wrong</h1>
            <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{state.message}</p>
            {state.detail ? (
              <p className="mt-2 text-sm text-zinc-500 dark:text-zinc-400">{state.detail}</p>
            ) : null}
            <p className="mt-4 text-xs text-zinc-500 dark:text-zinc-400">Taking you back to GitHub Integration…</p>
          </>
        )}
      </Card>
    </div>
  )
}
