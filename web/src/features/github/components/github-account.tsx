import { Avatar } from '@/components/ui/avatar'
import { Badge } from '@/components/ui/badge'
import { Card } from '@/components/ui/card'
import type { GitHubLink } from '@/types/api'
import { GitHubMark } from './github-mark'

/** The connected account: avatar, username and how many repositories it has. */
export function GitHubAccount({ github }: { github: GitHubLink }) {
  const count = github.repos?.length ?? 0
  return (
    <Card className="flex items-center gap-4 p-5">
      <Avatar src={github.avatar || undefined} name={github.username} username={github.username} size="lg" />
      <div className="min-w-0 flex-1">
        <div className="flex flex-wrap items-center gap-2">
          <p className="truncate text-lg font-semibold text-zinc-900 dark:text-zinc-50">@{github.username}</p>
          <Badge tone="success" dot>
            Connected
          </Badge>
        </div>
        <p className="mt-0.5 flex items-center gap-1.5 text-sm text-zinc-600 dark:text-zinc-400">
          <GitHubMark className="size-3.5" />
          {count} {count === 1 ? 'repository' : 'repositories'} available to deploy
        </p>
      </div>
    </Card>
  )
}
