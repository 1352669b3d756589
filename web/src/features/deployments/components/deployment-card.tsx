import { Link } from 'react-router'
import { Archive, GitCommitHorizontal, Hammer } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { paths } from '@/config/paths'
import { cn } from '@/lib/cn'
import { DEFAULT_BUILD, DEFAULT_DEPLOYMENT_VERSION } from '@/config/constants'
import { formatDateTime, msToSeconds } from '@/utils/format'
import { shortHash } from '../status'
import { triggerLabel } from '../trigger'
import type { Deployment } from '../types'
import { DeploymentActions } from './deployment-actions'
import { BranchLabel, TargetBadge } from './deployment-target'
import { DeploymentStatusBadge, DeploymentStatusIcon } from './deployment-status'

/** Says that a deployment's files were removed to save space (it can no longer be restarted). */
export function PrunedNote({ className }: { className?: string }) {
  return (
    <p className={cn('flex items-center gap-1.5 text-xs text-zinc-600 dark:text-zinc-400', className)}>
      <Archive className="size-3.5 shrink-0 text-zinc-400 dark:text-zinc-500" aria-hidden="true" />
      Files removed to save space
    </p>
  )
}

/** One deployment in the Deployments list (SPEC §2). */
export function DeploymentCard({ deployment: d }: { deployment: Deployment }) {
  const name = d.project?.name || 'Unknown Project'
  const build = d.buildInfo ?? {}
  const meta = d.metadata ?? {}
  const hash = shortHash(meta.commitHash)
  return (
    <Card className="p-4 sm:p-5" data-testid="deployment-card">
      <div className="flex flex-col gap-4 sm:flex-row sm:items-start sm:justify-between">
        <div className="flex min-w-0 items-start gap-3">
          <DeploymentStatusIcon status={d.status} sleeping={d.sleeping} />
          <div className="min-w-0">
            <div className="flex flex-wrap items-center gap-x-2 gap-y-1">
              <h3 className="truncate font-semibold text-zinc-900 dark:text-zinc-50">{name}</h3>
              <DeploymentStatusBadge status={d.status} sleeping={d.sleeping} />
              <TargetBadge deployment={d} />
              <BranchLabel deployment={d} className="text-xs text-zinc-600 dark:text-zinc-400" />
            </div>
            <p className="mt-0.5 flex flex-wrap items-center gap-x-2 text-sm text-zinc-600 dark:text-zinc-400">
              <span>v{d.version || DEFAULT_DEPLOYMENT_VERSION}</span>
              {d.subdomain ? (
                <>
                  <span aria-hidden="true">·</span>
                  <span className="truncate font-mono text-xs">{d.subdomain}</span>
                </>
              ) : null}
              <span className="inline-flex items-center gap-x-2">
                <span aria-hidden="true">·</span>
                <span data-testid="deployment-trigger">{triggerLabel(d)}</span>
              </span>
            </p>
            {d.prunedAt ? <PrunedNote className="mt-1" /> : null}
          </div>
        </div>
        <div className="flex flex-wrap items-center gap-2 sm:justify-end">
          <Link to={paths.deployment.getHref(d._id)} className={buttonClasses({ variant: 'secondary', size: 'sm' })}>
            View Details
          </Link>
          <DeploymentActions deployment={d} />
        </div>
      </div>

      <dl className="mt-4 grid gap-x-6 gap-y-2 rounded-lg bg-zinc-50 px-3 py-2.5 text-xs sm:grid-cols-4 dark:bg-zinc-950/50">
        <div className="flex min-w-0 items-center gap-1.5">
          <Hammer className="size-3.5 shrink-0 text-zinc-400" aria-hidden="true" />
          <dt className="sr-only">Build command</dt>
          <dd className="truncate font-mono text-zinc-700 dark:text-zinc-300">
            {build.buildCommand || DEFAULT_BUILD.buildCommandPlaceholder}
          </dd>
        </div>
        <div className="flex min-w-0 gap-1.5">
          <dt className="text-zinc-500">Output</dt>
          <dd className="truncate font-mono text-zinc-700 dark:text-zinc-300">
            {build.outputDirectory || DEFAULT_BUILD.outputDirectory}
          </dd>
        </div>
        <div className="flex min-w-0 gap-1.5">
          <dt className="text-zinc-500">Started</dt>
          <dd className="truncate text-zinc-700 dark:text-zinc-300">
            {formatDateTime(build.startTime || d.createdAt) || '—'}
          </dd>
        </div>
        <div className="flex min-w-0 gap-1.5">
          <dt className="text-zinc-500">Duration</dt>
          <dd className="text-zinc-700 tabular-nums dark:text-zinc-300">
            {build.duration ? `${msToSeconds(build.duration)}s` : '—'}
          </dd>
        </div>
      </dl>

      {hash || meta.commitMessage ? (
        <div className="mt-3 flex min-w-0 flex-wrap items-center gap-x-3 gap-y-1 text-xs text-zinc-600 dark:text-zinc-400">
          {hash ? (
            <span className="inline-flex items-center gap-1 font-mono text-zinc-700 dark:text-zinc-300">
              <GitCommitHorizontal className="size-3.5 text-zinc-400" aria-hidden="true" />
              {hash}
            </span>
          ) : null}
          {meta.commitMessage ? <span className="min-w-0 truncate">{meta.commitMessage}</span> : null}
        </div>
      ) : null}
    </Card>
  )
}
