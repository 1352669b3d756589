import { Link } from 'react-router'
import { ExternalLink, GitCommitHorizontal, RotateCcw, Rocket, Zap } from 'lucide-react'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { paths } from '@/config/paths'
import { formatRelativeTime } from '@/utils/format'
import { useDeployments } from '../api/get-deployments'
import { useRedeployDeployment } from '../api/redeploy-deployment'
import { liveProduction, shortHash } from '../status'
import { triggerLabel } from '../trigger'
import { BranchLabel } from './deployment-target'
import { DeploymentStatusBadge } from './deployment-status'

type ProductionCardProps = {
  projectId: string
  /** The project's active deployment, when it names one. */
  activeId?: string
}

/**
 * The deployment the project's address serves: status, URL, commit and what
 * started it, with Redeploy (the same commit again) and Redeploy without cache.
 */
export function ProductionCard({ projectId, activeId }: ProductionCardProps) {
  const query = useDeployments({ projectId, target: 'production' })
  const redeploy = useRedeployDeployment()
  const live = liveProduction(query.data ?? [], activeId)
  const meta = live?.metadata ?? {}
  const hash = shortHash(meta.commitHash)
  const busy = redeploy.isPending
  return (
    <Card data-testid="production-card">
      <CardHeader className="flex-row flex-wrap items-center justify-between gap-3">
        <CardTitle className="flex items-center gap-2">
          <Zap className="size-4 text-indigo-500" aria-hidden="true" />
          Production
        </CardTitle>
        {live ? (
          <div className="flex flex-wrap items-center gap-1.5">
            <Button
              variant="secondary"
              size="sm"
              disabled={busy}
              loading={busy && !redeploy.variables?.noCache}
              onClick={() => redeploy.mutate({ id: live._id })}
              icon={<RotateCcw className="size-4" aria-hidden="true" />}
            >
              {busy && !redeploy.variables?.noCache ? 'Redeploying...' : 'Redeploy'}
            </Button>
            <Button
              variant="ghost"
              size="sm"
              className="px-2"
              disabled={busy}
              loading={busy && redeploy.variables?.noCache}
              onClick={() => redeploy.mutate({ id: live._id, noCache: true })}
            >
              {busy && redeploy.variables?.noCache ? 'Redeploying...' : 'Redeploy without cache'}
            </Button>
          </div>
        ) : null}
      </CardHeader>
      <CardContent>
        {query.isError ? (
          <p role="alert" className="text-sm text-red-600 dark:text-red-400">
            The production deployment could not be loaded.
          </p>
        ) : query.isPending ? (
          <div aria-busy="true" aria-label="Loading production deployment" className="space-y-2">
            <Skeleton className="h-5 w-72 max-w-full" />
            <Skeleton className="h-4 w-96 max-w-full" />
          </div>
        ) : !live ? (
          <EmptyState
            icon={Rocket}
            title="Nothing in production yet"
            description="Deploy the project, or push to its production branch, to put it live."
            className="py-8"
          />
        ) : (
          <div className="flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between">
            <div className="min-w-0 space-y-1.5">
              <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
                <DeploymentStatusBadge status={live.status} />
                {live.url ? (
                  <a
                    href={live.url}
                    target="_blank"
                    rel="noopener noreferrer"
                    className="inline-flex min-w-0 items-center gap-1 rounded font-mono text-sm font-medium break-all text-indigo-600 hover:underline dark:text-indigo-400"
                  >
                    {live.url.replace(/^https?:\/\//, '')}
                    <ExternalLink className="size-3.5 shrink-0" aria-hidden="true" />
                  </a>
                ) : null}
              </div>
              <p className="flex min-w-0 flex-wrap items-center gap-x-2 gap-y-1 text-sm text-zinc-700 dark:text-zinc-300">
                {hash ? (
                  <span className="inline-flex items-center gap-1 font-mono text-xs">
                    <GitCommitHorizontal className="size-3.5 text-zinc-400" aria-hidden="true" />
                    {hash}
                  </span>
                ) : null}
                <span className="min-w-0 break-words">{meta.commitMessage || 'No commit message'}</span>
              </p>
              <p className="flex flex-wrap items-center gap-x-2 gap-y-1 text-xs text-zinc-500 dark:text-zinc-400">
                <span data-testid="production-trigger">{triggerLabel(live)}</span>
                {meta.author && meta.trigger !== 'push' ? (
                  <>
                    <span aria-hidden="true">·</span>
                    <span>{meta.author}</span>
                  </>
                ) : null}
                <span aria-hidden="true">·</span>
                <BranchLabel deployment={live} />
                <span aria-hidden="true">·</span>
                <span>{formatRelativeTime(live.promotedAt || live.createdAt)}</span>
              </p>
            </div>
            <Link
              to={paths.deployment.getHref(live._id)}
              className="shrink-0 rounded text-sm font-medium text-indigo-600 hover:underline dark:text-indigo-400"
            >
              View deployment
            </Link>
          </div>
        )}
      </CardContent>
    </Card>
  )
}
