import { Link } from 'react-router'
import { Check, Globe, TriangleAlert } from 'lucide-react'
import { Button, buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { paths } from '@/config/paths'
import { GitHubMark } from './github-mark'

const BENEFITS = [
  'Pick any of your repositories, private ones included',
  'Deploy a repository in one click from its details',
  'Gantry only reads your code: it never pushes to GitHub',
]

type ConnectGitHubProps = {
  onConnect: () => void
  connecting: boolean
  /** The server's message when no OAuth app is configured. */
  notConfigured?: string | null
}

/** Shows the environment variables a server message names in monospace. */
function withCode(message: string) {
  return message.split(/(GANTRY_[A-Z0-9_]+)/).map((part, i) =>
    i % 2 === 1 ? (
      <code key={i} className="font-mono text-[0.8em]">
        {part}
      </code>
    ) : (
      part
    ),
  )
}

/** The GitHub integration page before an account is connected. */
export function ConnectGitHub({ onConnect, connecting, notConfigured }: ConnectGitHubProps) {
  return (
    <Card className="overflow-hidden">
      <div className="grid gap-8 p-6 sm:p-8 md:grid-cols-[minmax(0,1fr)_16rem] md:items-center">
        <div className="min-w-0">
          <div className="mb-5 flex size-12 items-center justify-center rounded-xl bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900">
            <GitHubMark className="size-7" />
          </div>
          <h2 className="text-lg font-semibold text-zinc-900 dark:text-zinc-50">Connect your GitHub account</h2>
          <p className="mt-1 max-w-prose text-sm text-zinc-600 dark:text-zinc-400">
            Link GitHub to see your repositories here and deploy them to your own subdomain.
          </p>
          <ul className="mt-5 space-y-2">
            {BENEFITS.map((text) => (
              <li key={text} className="flex items-start gap-2 text-sm text-zinc-700 dark:text-zinc-300">
                <Check className="mt-0.5 size-4 shrink-0 text-emerald-600 dark:text-emerald-400" aria-hidden="true" />
                {text}
              </li>
            ))}
          </ul>
          {notConfigured ? (
            <div
              role="alert"
              className="mt-6 flex gap-3 rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm sm:p-4 text-amber-900 dark:border-amber-500/40 dark:bg-amber-500/10 dark:text-amber-200"
            >
              <TriangleAlert className="mt-0.5 size-4 shrink-0" aria-hidden="true" />
              <div className="min-w-0">
                <p className="font-medium">GitHub connect is unavailable</p>
                <p className="mt-1 break-words">{withCode(notConfigured)}</p>
              </div>
            </div>
          ) : null}
        </div>
        <div className="flex flex-col gap-3">
          <Button
            size="lg"
            onClick={onConnect}
            loading={connecting}
            icon={<GitHubMark className="size-5" />}
            className="w-full"
          >
            Connect GitHub
          </Button>
          <Link to={paths.newProject.getHref()} className={buttonClasses({ variant: 'ghost', className: 'w-full' })}>
            <Globe className="size-4" aria-hidden="true" />
            Deploy a public repository
          </Link>
          <p className="text-center text-xs text-zinc-500 dark:text-zinc-400">
            You will be asked to authorize Gantry on GitHub.
          </p>
        </div>
      </div>
    </Card>
  )
}
