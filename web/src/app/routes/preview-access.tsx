import { useEffect, useRef, useState } from 'react'
import { Link, useSearchParams } from 'react-router'
import { Lock, XCircle } from 'lucide-react'
import { Card } from '@/components/ui/card'
import { Logo } from '@/components/ui/logo'
import { Spinner } from '@/components/ui/spinner'
import { paths } from '@/config/paths'
import { AuthCard } from '@/features/auth/components/auth-card'
import { LoginForm } from '@/features/auth/components/login-form'
import { previewHandOff } from '@/features/deployments/api/preview-access'
import { errorMessage } from '@/lib/api-client'
import { useAuth } from '@/lib/auth'

/** Leaves for the preview's host. Tests spy on it. */
export const previewNavigation = {
  go(url: string): void {
    window.location.replace(url)
  },
}

/**
 * /preview-access?host=&to=: where a preview of a private repository sends
 * a browser without its owner's cookie (issue 24). Signed in, the page asks
 * the API for a one-minute pass to that preview and goes there (the preview
 * sets its cookie and shows the page asked for); signed out, it asks for
 * the sign-in first. Someone else's preview is refused with the reason.
 */
export function PreviewAccessRoute() {
  const [params] = useSearchParams()
  const host = params.get('host') ?? ''
  const to = params.get('to') ?? '/'
  const { user, status } = useAuth()
  const [failure, setFailure] = useState<string | null>(null)
  const started = useRef(false)

  useEffect(() => {
    if (!user || started.current) return
    started.current = true
    previewHandOff(host, to)
      .then((url) => previewNavigation.go(url))
      .catch((err: unknown) => setFailure(errorMessage(err, 'The preview could not be opened. Try again.', true)))
  }, [user, host, to])

  if (status !== 'loading' && !user) {
    return (
      <>
        <title>Sign in to open a preview · Gantry</title>
        <AuthCard
          title="Sign in to open this preview"
          description={`${host} is a preview of a private repository: only its owner can open it.`}
          footer={<Link to={paths.home.getHref()}>Back to Gantry</Link>}
        >
          <LoginForm />
        </AuthCard>
      </>
    )
  }
  return (
    <div className="flex min-h-dvh flex-col items-center justify-center px-4">
      <title>Opening a preview · Gantry</title>
      <Logo className="mb-8" />
      <Card className="w-full max-w-sm p-8 text-center" role="status" aria-live="polite">
        {failure ? (
          <>
            <XCircle className="mx-auto size-10 text-red-500" aria-hidden="true" />
            <h1 className="mt-4 text-lg font-semibold text-zinc-900 dark:text-zinc-50">This preview cannot be opened</h1>
            <p className="mt-1 text-sm break-words text-zinc-600 dark:text-zinc-400">{failure}</p>
            <Link
              to={paths.dashboard.getHref()}
              className="mt-4 inline-block text-sm font-medium text-indigo-600 hover:underline dark:text-indigo-400"
            >
              Go to your dashboard
            </Link>
          </>
        ) : (
          <>
            <Spinner className="mx-auto size-8 text-indigo-600 dark:text-indigo-400" />
            <h1 className="mt-4 flex items-center justify-center gap-1.5 text-lg font-semibold text-zinc-900 dark:text-zinc-50">
              <Lock className="size-4 text-zinc-400" aria-hidden="true" />
              Opening the preview…
            </h1>
            <p className="mt-1 text-sm break-all text-zinc-600 dark:text-zinc-400">{host}</p>
          </>
        )}
      </Card>
    </div>
  )
}
