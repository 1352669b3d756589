import { Link } from 'react-router'
import { GitBranch } from 'lucide-react'
import { Avatar } from '@/components/ui/avatar'
import { Badge } from '@/components/ui/badge'
import { buttonClasses } from '@/components/ui/button'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { paths } from '@/config/paths'
import type { User } from '@/types/api'

/** Whether a GitHub account is connected (SPEC §2 Profile). */
export function GitHubStatusCard({ user }: { user: User }) {
  const github = user.github
  const connected = Boolean(github?.connected)
  return (
    <Card>
      <CardHeader>
        <CardTitle>GitHub integration</CardTitle>
        <div>
          {connected ? (
            <Badge tone="success" dot>
              Connected
            </Badge>
          ) : (
            <Badge tone="neutral" dot>
              Not connected
            </Badge>
          )}
        </div>
      </CardHeader>
      <CardContent>
        {connected ? (
          <div className="flex items-center gap-3">
            <Avatar src={github?.avatar || undefined} name={github?.username} size="sm" />
            <div className="min-w-0 flex-1">
              <p className="truncate text-sm font-medium text-zinc-900 dark:text-zinc-50">@{github?.username}</p>
              <p className="text-xs text-zinc-500 dark:text-zinc-400">
                {github?.repos?.length ?? 0} {(github?.repos?.length ?? 0) === 1 ? 'repository' : 'repositories'}
              </p>
            </div>
            <Link to={paths.githubIntegration.getHref()} className={buttonClasses({ variant: 'secondary', size: 'sm' })}>
              Manage
            </Link>
          </div>
        ) : (
          <div>
            <p className="text-sm text-zinc-600 dark:text-zinc-400">
              Connect GitHub to deploy your own repositories, including private ones.
            </p>
            <Link
              to={paths.githubIntegration.getHref()}
              className={buttonClasses({ variant: 'secondary', size: 'sm', className: 'mt-4' })}
            >
              <GitBranch className="size-4" aria-hidden="true" />
              Connect GitHub
            </Link>
          </div>
        )}
      </CardContent>
    </Card>
  )
}
