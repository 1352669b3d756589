import { useState } from 'react'
import { useNavigate, useParams } from 'react-router'
import { CircleX, Clock, Eraser, Globe, Hammer, RefreshCw, ScrollText } from 'lucide-react'
import { BackLink } from '@/components/ui/back-link'
import { Button } from '@/components/ui/button'
import { StatTile } from '@/components/ui/detail-list'
import { LoadErrorState } from '@/components/ui/load-error-state'
import { Skeleton } from '@/components/ui/skeleton'
import { DEFAULT_DEPLOYMENT_VERSION } from '@/config/constants'
import { paths } from '@/config/paths'
import { useDeployment } from '@/features/deployments/api/get-deployment'
import { useRedeployDeployment } from '@/features/deployments/api/redeploy-deployment'
import { DeploymentActions } from '@/features/deployments/components/deployment-actions'
import { PrunedNote } from '@/features/deployments/components/deployment-card'
import {
  BuildInfoCard,
  BuildLogsCard,
  CommitInfoCard,
  EnvironmentCard,
  ProjectBuildConfigCard,
} from '@/features/deployments/components/deployment-sections'
import { DeploymentStatusBadge, DeploymentStatusIcon } from '@/features/deployments/components/deployment-status'
import { BranchLabel, TargetBadge } from '@/features/deployments/components/deployment-target'
import { WhyItFailedCard } from '@/features/deployments/components/why-it-failed'
import { inProgress } from '@/features/deployments/status'
import { triggerLabel } from '@/features/deployments/trigger'
import { LogsPanel } from '@/features/logs/components/logs-panel'
import { cn } from '@/lib/cn'
import { useRetry } from '@/lib/use-retry'
import { formatDuration } from '@/utils/format'

/** /deployments/:id: one deployment with its logs (SPEC §2 Deployment detail). */
export function DeploymentDetailRoute() {
  const { id = '' } = useParams()
  const navigate = useNavigate()
  const query = useDeployment(id)
  const failure = useRetry(query)
  const [showLogs, setShowLogs] = useState(true)
  const redeploy = useRedeployDeployment({ openNew: true })

  const back = (
    <BackLink to={paths.deployments.getHref()}>Back to Deployments</BackLink>
  )

  if (query.isError || failure.retrying) {
    return (
      <LoadErrorState
        notFoundTitle="Deployment not found"
        title="Could not load this deployment"
        failure={failure}
        back={
          <BackLink to={paths.deployments.getHref()} variant="button">
            Back to Deployments
          </BackLink>
        }
      />
    )
  }

  if (query.isPending) {
    return (
      <div aria-busy="true" aria-label="Loading deployment">
        <title>Deployment · Gantry</title>
        {back}
        <div className="flex items-center gap-4">
          <Skeleton className="size-12 rounded-lg" />
          <div className="space-y-2">
            <Skeleton className="h-7 w-64" />
            <Skeleton className="h-4 w-40" />
          </div>
        </div>
        <div className="mt-8 grid gap-4 sm:grid-cols-3">
          {[0, 1, 2].map((i) => (
            <Skeleton key={i} className="h-20" />
          ))}
        </div>
        <Skeleton className="mt-6 h-96" />
      </div>
    )
  }

  const d = query.data
  const name = d.project?.name || 'Unknown Project'
  const running = inProgress(d.status)
  const buildCommand = d.buildInfo?.buildCommand || d.project?.buildConfig?.buildCommand
  return (
    <>
      <title>{`${name} Deployment · Gantry`}</title>
      {back}
      <div className="mb-6 flex flex-col gap-4 xl:flex-row xl:items-start xl:justify-between">
        <div className="flex min-w-0 items-start gap-4">
          <DeploymentStatusIcon status={d.status} sleeping={d.sleeping} className="size-12" />
          <div className="min-w-0">
            <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
              <h1 className="text-2xl font-semibold tracking-tight break-words text-zinc-900 dark:text-zinc-50">
                {name} Deployment
              </h1>
              <DeploymentStatusBadge status={d.status} sleeping={d.sleeping} />
              <TargetBadge deployment={d} />
            </div>
            <p className="mt-1 flex flex-wrap items-center gap-x-2 text-sm text-zinc-600 dark:text-zinc-400">
              <span>Version {d.version || DEFAULT_DEPLOYMENT_VERSION}</span>
              {d.subdomain ? (
                <>
                  <span aria-hidden="true">·</span>
                  <span className="font-mono text-xs" data-testid="deployment-subdomain">
                    {d.subdomain}
                  </span>
                </>
              ) : null}
              {d.metadata?.branch || d.metadata?.pullRequest ? (
                <span className="inline-flex min-w-0 items-center gap-x-2">
                  <span aria-hidden="true">·</span>
                  <BranchLabel deployment={d} className="text-xs" />
                </span>
              ) : null}
              <span className="inline-flex items-center gap-x-2">
                <span aria-hidden="true">·</span>
                <span data-testid="deployment-trigger">{triggerLabel(d)}</span>
              </span>
            </p>
            {d.prunedAt ? <PrunedNote className="mt-1.5" /> : null}
          </div>
        </div>
        <div className="flex shrink-0 flex-wrap items-center gap-2">
          <Button
            variant="secondary"
            onClick={() => void query.refetch()}
            disabled={query.isFetching}
            icon={<RefreshCw className={cn('size-4', query.isFetching && 'motion-safe:animate-spin')} aria-hidden="true" />}
          >
            Refresh
          </Button>
          {!running ? (
            <Button
              variant="secondary"
              loading={redeploy.isPending}
              disabled={redeploy.isPending}
              onClick={() => redeploy.mutate({ id: d._id, noCache: true })}
              icon={<Eraser className="size-4" aria-hidden="true" />}
            >
              Redeploy without cache
            </Button>
          ) : null}
          <DeploymentActions
            deployment={d}
            size="md"
            onDeleted={() => navigate(paths.deployments.getHref())}
          />
        </div>
      </div>

      {d.status === 'failed' && d.diagnosis ? <WhyItFailedCard diagnosis={d.diagnosis} error={d.error} /> : null}
      {d.status === 'failed' && !d.diagnosis ? (
        <div
          role="alert"
          className="mb-6 flex items-start gap-3 rounded-xl border border-red-200 bg-red-50 px-4 py-3 text-sm text-red-800 dark:border-red-500/30 dark:bg-red-500/10 dark:text-red-200"
        >
          <CircleX className="mt-0.5 size-5 shrink-0 text-red-500" aria-hidden="true" />
          <div className="min-w-0">
            <p className="font-semibold">This deployment failed</p>
            <p className="mt-0.5 break-words">{d.error || 'The build did not finish. See the logs below for the reason.'}</p>
          </div>
        </div>
      ) : null}

      <div className="mb-6 grid gap-4 sm:grid-cols-3">
        <StatTile
          label="URL"
          icon={<Globe className="size-3.5" aria-hidden="true" />}
          mono
          value={
            d.url ? (
              d.status === 'live' ? (
                <a
                  href={d.url}
                  target="_blank"
                  rel="noopener noreferrer"
                  className="rounded text-indigo-600 hover:underline dark:text-indigo-400"
                >
                  {d.url.replace(/^https?:\/\//, '')}
                </a>
              ) : (
                <span className="text-zinc-500 dark:text-zinc-400">{d.url.replace(/^https?:\/\//, '')}</span>
              )
            ) : (
              '—'
            )
          }
        />
        <StatTile
          label="Build Command"
          icon={<Hammer className="size-3.5" aria-hidden="true" />}
          mono={Boolean(buildCommand)}
          value={buildCommand || 'No build step'}
        />
        <StatTile
          label="Duration"
          icon={<Clock className="size-3.5" aria-hidden="true" />}
          value={d.buildInfo?.duration ? formatDuration(d.buildInfo.duration) : running ? 'In progress' : '—'}
        />
      </div>

      <div className="mb-6">
        <div className="mb-3 flex items-center justify-between">
          <h2 className="sr-only">Logs</h2>
          <Button
            variant="ghost"
            size="sm"
            aria-expanded={showLogs}
            onClick={() => setShowLogs((v) => !v)}
            icon={<ScrollText className="size-4" aria-hidden="true" />}
          >
            {showLogs ? 'Hide Deployment Logs' : 'Show Deployment Logs'}
          </Button>
        </div>
        {showLogs ? (
          <LogsPanel
            deploymentId={d._id}
            liveByDefault={running}
            highlight={d.status === 'failed' ? d.diagnosis?.lines : undefined}
          />
        ) : null}
      </div>

      <div className="grid gap-6 lg:grid-cols-2">
        <ProjectBuildConfigCard deployment={d} />
        <BuildInfoCard deployment={d} />
        <CommitInfoCard deployment={d} />
        <EnvironmentCard deployment={d} />
      </div>
      <div className="mt-6">
        <BuildLogsCard logs={d.buildLogs} />
      </div>
    </>
  )
}
