import { Link } from 'react-router'
import { ExternalLink, GitBranch, GitPullRequest } from 'lucide-react'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { paths } from '@/config/paths'
import { formatRelativeTime } from '@/utils/format'
import { usePreviews } from '../api/get-previews'
import { canVisit } from '../status'
import { previewSource } from '../trigger'
import { DeploymentStatusBadge } from './deployment-status'

/** A project's preview deployments: one per branch or pull request, each at its own URL. */
export function PreviewsCard({ projectId }: { projectId: string }) {
  const query = usePreviews(projectId)
  const list = query.data ?? []
  return (
    <Card>
      <CardHeader>
        <CardTitle className="flex items-center gap-2">
          <GitPullRequest className="size-4 text-zinc-400" aria-hidden="true" />
          Previews
        </CardTitle>
        <CardDescription>Every other branch and pull request gets an address of its own.</CardDescription>
      </CardHeader>
      <CardContent>
        {query.isError ? (
          <p role="alert" className="text-sm text-red-600 dark:text-red-400">
            The previews could not be loaded.
          </p>
        ) : query.isPending ? (
          <div aria-busy="true" aria-label="Loading previews" className="space-y-3">
            {[0, 1].map((i) => (
              <Skeleton key={i} className="h-10" />
            ))}
          </div>
        ) : list.length === 0 ? (
          <EmptyState
            icon={GitBranch}
            title="No previews yet"
            description="Push a branch or open a pull request to get a preview."
            className="py-8"
          />
        ) : (
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" aria-label="Previews">
            {list.map((d) => {
              const pr = Boolean(d.metadata?.pullRequest)
              const Icon = pr ? GitPullRequest : GitBranch
              return (
                <li key={d._id} data-testid="preview-row" className="flex items-start gap-3 py-3 first:pt-0 last:pb-0">
                  <Icon className="mt-0.5 size-4 shrink-0 text-zinc-400" aria-hidden="true" />
                  <div className="min-w-0 flex-1">
                    <div className="flex flex-wrap items-center gap-x-2 gap-y-1">
                      <Link
                        to={paths.deployment.getHref(d._id)}
                        className={
                          'min-w-0 truncate rounded text-sm font-medium text-zinc-900 hover:underline dark:text-zinc-100 ' +
                          (pr ? '' : 'font-mono')
                        }
                      >
                        {previewSource(d)}
                      </Link>
                      <DeploymentStatusBadge status={d.status} />
                      <span className="ml-auto text-xs whitespace-nowrap text-zinc-500 dark:text-zinc-400">
                        {formatRelativeTime(d.createdAt)}
                      </span>
                    </div>
                    {d.url ? (
                      canVisit(d) ? (
                        <a
                          href={d.url}
                          target="_blank"
                          rel="noopener noreferrer"
                          title={d.url}
                          className="mt-0.5 inline-flex max-w-full min-w-0 items-center gap-1 rounded font-mono text-xs text-indigo-600 hover:underline dark:text-indigo-400"
                        >
                          <span className="truncate">{d.url.replace(/^https?:\/\//, '')}</span>
                          <ExternalLink className="size-3 shrink-0" aria-hidden="true" />
                        </a>
                      ) : (
                        <p className="mt-0.5 truncate font-mono text-xs text-zinc-500 dark:text-zinc-400" title={d.url}>
                          {d.url.replace(/^https?:\/\//, '')}
                        </p>
                      )
                    ) : null}
                  </div>
                </li>
              )
            })}
          </ul>
        )}
      </CardContent>
    </Card>
  )
}
