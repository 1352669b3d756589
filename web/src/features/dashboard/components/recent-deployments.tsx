import type { ReactNode } from 'react'
import { Link } from 'react-router'
import { Rocket, Timer } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { paths } from '@/config/paths'
import { formatDateTime, formatDuration, formatRelativeTime } from '@/utils/format'
import type { DashboardDeployment } from '../types'
import { RowsSkeleton, SectionCard } from './section-card'

type RecentDeploymentsProps = {
  deployments?: DashboardDeployment[]
  loading: boolean
  /** The status badge, supplied by the app. */
  renderStatus: (status: string, sleeping?: boolean) => ReactNode
}

/** The five newest deployments (SPEC §2). */
export function RecentDeployments({ deployments, loading, renderStatus }: RecentDeploymentsProps) {
  return (
    <SectionCard
      id="recent-deployments"
      title="Recent Deployments"
      actions={
        <Link to={paths.deployments.getHref()} className={buttonClasses({ variant: 'ghost', size: 'sm' })}>
          View all
        </Link>
      }
    >
      {deployments ? (
        deployments.length === 0 ? (
          <EmptyState
            className="m-5"
            icon={Rocket}
            title="No deployments yet"
            description="Deploy a project and its builds show up here."
            action={
              <Link to={paths.projects.getHref()} className={buttonClasses({ variant: 'secondary' })}>
                Go to Projects
              </Link>
            }
          />
        ) : (
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {deployments.map((d) => (
              <li key={d.id}>
                <Link
                  to={paths.deployment.getHref(d.id)}
                  className="flex items-center gap-3 px-5 py-3.5 transition-colors hover:bg-zinc-50 dark:hover:bg-zinc-800/40"
                >
                  <div className="min-w-0 flex-1">
                    <p className="truncate text-sm font-medium text-zinc-900 dark:text-zinc-50">{d.projectName}</p>
                    <p className="truncate text-xs text-zinc-500 dark:text-zinc-400">
                      <span className="font-mono">{d.subdomain}</span>
                      <span className="sm:hidden"> · {formatRelativeTime(d.deployedAt)}</span>
                    </p>
                  </div>
                  <div className="hidden shrink-0 text-right text-xs text-zinc-500 sm:block dark:text-zinc-400">
                    <p className="flex items-center justify-end gap-1" title="Build time">
                      <Timer className="size-3.5" aria-hidden="true" />
                      <span className="sr-only">Build time </span>
                      {d.buildTime === null ? '—' : formatDuration(d.buildTime)}
                    </p>
                    <time dateTime={d.deployedAt} title={formatDateTime(d.deployedAt)}>
                      {formatRelativeTime(d.deployedAt)}
                    </time>
                  </div>
                  <div className="shrink-0">{renderStatus(d.status, d.sleeping)}</div>
                </Link>
              </li>
            ))}
          </ul>
        )
      ) : loading ? (
        <RowsSkeleton
          render={() => (
            <>
              <div className="flex-1 space-y-2">
                <Skeleton className="h-4 w-2/5" />
                <Skeleton className="h-3 w-1/4" />
              </div>
              <Skeleton className="h-5 w-14 rounded-full" />
            </>
          )}
        />
      ) : (
        <p className="px-5 py-8 text-center text-sm text-zinc-500 dark:text-zinc-400">Deployments could not be loaded.</p>
      )}
    </SectionCard>
  )
}
