import type { ReactNode } from 'react'
import { Link } from 'react-router'
import { ExternalLink, FolderPlus, RefreshCw } from 'lucide-react'
import { Button, buttonClasses } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { paths } from '@/config/paths'
import { cn } from '@/lib/cn'
import { formatDateTime, formatRelativeTime } from '@/utils/format'
import type { DashboardProject } from '../types'
import { RowsSkeleton, SectionCard } from './section-card'

type RecentProjectsProps = {
  projects?: DashboardProject[]
  loading: boolean
  refreshing: boolean
  onRefresh: () => void
  /** The project type's icon and status badge, supplied by the app. */
  renderIcon: (type: string) => ReactNode
  renderStatus: (status: string, sleeping?: boolean) => ReactNode
}

/** The five newest projects, with Refresh and View all (SPEC §2). */
export function RecentProjects({ projects, loading, refreshing, onRefresh, renderIcon, renderStatus }: RecentProjectsProps) {
  return (
    <SectionCard
      id="recent-projects"
      title="Recent Projects"
      actions={
        <>
          <Button
            variant="ghost"
            size="sm"
            onClick={onRefresh}
            disabled={refreshing}
            aria-label="Refresh"
            icon={<RefreshCw className={cn('size-4', refreshing && 'motion-safe:animate-spin')} aria-hidden="true" />}
          >
            <span className="hidden sm:inline">Refresh</span>
          </Button>
          <Link to={paths.projects.getHref()} className={buttonClasses({ variant: 'ghost', size: 'sm' })}>
            View all
          </Link>
        </>
      }
    >
      {projects ? (
        projects.length === 0 ? (
          <EmptyState
            className="m-5"
            icon={FolderPlus}
            title="No projects yet"
            description="Import a repository to create your first project."
            action={
              <Link to={paths.newProject.getHref()} className={buttonClasses({ variant: 'secondary' })}>
                Create Your First Project
              </Link>
            }
          />
        ) : (
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {projects.map((p) => (
              <li key={p.id} className="flex items-center gap-3 px-5 py-3.5">
                {renderIcon(p.type)}
                <div className="min-w-0 flex-1">
                  <Link
                    to={paths.project.getHref(p.id)}
                    className="block truncate text-sm font-medium text-zinc-900 hover:text-indigo-600 hover:underline dark:text-zinc-50 dark:hover:text-indigo-300"
                  >
                    {p.name}
                  </Link>
                  <p className="truncate text-xs text-zinc-500 dark:text-zinc-400">
                    {p.lastDeployed ? (
                      <>
                        Deployed{' '}
                        <time dateTime={p.lastDeployed} title={formatDateTime(p.lastDeployed)}>
                          {formatRelativeTime(p.lastDeployed)}
                        </time>
                      </>
                    ) : (
                      'Never deployed'
                    )}
                  </p>
                </div>
                <div className="flex shrink-0 items-center gap-2">
                  {renderStatus(p.status, p.sleeping)}
                  {p.url ? (
                    <a
                      href={p.url}
                      target="_blank"
                      rel="noopener noreferrer"
                      aria-label={`Visit ${p.name}`}
                      title="Visit"
                      className="inline-flex size-8 items-center justify-center rounded-lg text-zinc-500 hover:bg-zinc-100 hover:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-50"
                    >
                      <ExternalLink className="size-4" aria-hidden="true" />
                    </a>
                  ) : null}
                </div>
              </li>
            ))}
          </ul>
        )
      ) : loading ? (
        <RowsSkeleton
          render={() => (
            <>
              <Skeleton className="size-10 rounded-lg" />
              <div className="flex-1 space-y-2">
                <Skeleton className="h-4 w-1/2" />
                <Skeleton className="h-3 w-1/3" />
              </div>
              <Skeleton className="h-5 w-14 rounded-full" />
            </>
          )}
        />
      ) : (
        <p className="px-5 py-8 text-center text-sm text-zinc-500 dark:text-zinc-400">Projects could not be loaded.</p>
      )}
    </SectionCard>
  )
}
