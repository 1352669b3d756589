import { useState } from 'react'
import { Link } from 'react-router'
import { ArrowUpCircle, GitCommitHorizontal, History } from 'lucide-react'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { ConfirmDialog } from '@/components/ui/dialog'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { paths } from '@/config/paths'
import { formatRelativeTime } from '@/utils/format'
import { useDeployments } from '../api/get-deployments'
import { usePromoteDeployment } from '../api/promote-deployment'
import { canPromote, liveProduction, shortHash } from '../status'
import { triggerLabel } from '../trigger'
import type { Deployment } from '../types'
import { DeploymentStatusBadge } from './deployment-status'

export const PROMOTE_TITLE = 'Promote to production?'

/**
 * A project's production deployments, newest first, each with what started
 * it and its commit; Promote serves an earlier successful one again.
 */
export function HistoryCard({ projectId, activeId }: { projectId: string; activeId?: string }) {
  const query = useDeployments({ projectId, target: 'production' })
  const [asking, setAsking] = useState<Deployment | null>(null)
  const promote = usePromoteDeployment({ onSettled: () => setAsking(null) })
  const list = query.data ?? []
  const live = liveProduction(list, activeId)
  return (
    <Card>
      <CardHeader>
        <CardTitle className="flex items-center gap-2">
          <History className="size-4 text-zinc-400" aria-hidden="true" />
          History
        </CardTitle>
        <CardDescription>Promote an earlier deployment to serve it again at once, with no rebuild.</CardDescription>
      </CardHeader>
      <CardContent>
        {query.isError ? (
          <p role="alert" className="text-sm text-red-600 dark:text-red-400">
            The deployment history could not be loaded.
          </p>
        ) : query.isPending ? (
          <div aria-busy="true" aria-label="Loading history" className="space-y-3">
            {[0, 1, 2].map((i) => (
              <Skeleton key={i} className="h-10" />
            ))}
          </div>
        ) : list.length === 0 ? (
          <EmptyState icon={History} title="No production deployments yet" className="py-8" />
        ) : (
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" aria-label="Production deployments">
            {list.map((d) => {
              const meta = d.metadata ?? {}
              const isLive = d._id === live?._id
              return (
                <li
                  key={d._id}
                  data-testid="history-row"
                  className="flex flex-wrap items-center gap-x-4 gap-y-2 py-3 first:pt-0 last:pb-0"
                >
                  <div className="min-w-0 flex-1 basis-64">
                    <p className="flex min-w-0 items-center gap-2 text-sm text-zinc-900 dark:text-zinc-100">
                      {meta.commitHash ? (
                        <span className="inline-flex shrink-0 items-center gap-1 font-mono text-xs text-zinc-600 dark:text-zinc-400">
                          <GitCommitHorizontal className="size-3.5 text-zinc-400" aria-hidden="true" />
                          {shortHash(meta.commitHash)}
                        </span>
                      ) : null}
                      <span className="truncate">{meta.commitMessage || 'No commit message'}</span>
                    </p>
                    <p className="mt-0.5 text-xs text-zinc-500 dark:text-zinc-400">
                      {triggerLabel(d)} · {formatRelativeTime(d.createdAt)}
                    </p>
                  </div>
                  <div className="flex items-center gap-3">
                    {isLive ? <Badge tone="accent">Current</Badge> : null}
                    <DeploymentStatusBadge status={d.status} />
                    {canPromote(d, live?._id) ? (
                      <Button
                        variant="secondary"
                        size="sm"
                        disabled={promote.isPending}
                        loading={promote.isPending && promote.variables === d._id}
                        onClick={() => setAsking(d)}
                        icon={<ArrowUpCircle className="size-4" aria-hidden="true" />}
                        aria-label={`Promote ${shortHash(meta.commitHash) || d._id}`}
                      >
                        Promote
                      </Button>
                    ) : null}
                    <Link
                      to={paths.deployment.getHref(d._id)}
                      className="rounded text-sm font-medium text-indigo-600 hover:underline dark:text-indigo-400"
                    >
                      View
                    </Link>
                  </div>
                </li>
              )
            })}
          </ul>
        )}
      </CardContent>
      <ConfirmDialog
        open={asking !== null}
        title={PROMOTE_TITLE}
        message={
          asking
            ? `The production address will serve ${
                shortHash(asking.metadata?.commitHash) || 'this deployment'
              }${asking.metadata?.commitMessage ? ` (“${asking.metadata.commitMessage}”)` : ''} again at once, with no rebuild.`
            : ''
        }
        confirmLabel={promote.isPending ? 'Promoting...' : 'Promote'}
        variant="primary"
        loading={promote.isPending}
        onConfirm={() => asking && promote.mutate(asking._id)}
        onCancel={() => setAsking(null)}
      />
    </Card>
  )
}
