import { useRef } from 'react'
import { Link } from 'react-router'
import { ExternalLink, Rocket } from 'lucide-react'
import { Badge } from '@/components/ui/badge'
import { buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { FEATURED_PROJECTS_LIMIT } from '@/config/constants'
import { paths } from '@/config/paths'
import type { PublicDeployment } from '@/types/api'
import { formatRelativeTime } from '@/utils/format'
import { useFeaturedDeployments } from '../api/get-featured-deployments'
import { recordView } from '../api/record-view'
import { useWakeHint } from '../api/wake-hint'
import { SleepingBadge } from './app-card'
import { AppTypeIcon, appTypeLabel } from './app-type-icon'

/** Up to three of the newest public deployments, for the landing page. */
export function FeaturedProjects({ emptyAction }: { emptyAction?: { label: string; to: string } }) {
  const featured = useFeaturedDeployments()

  if (featured.isPending) {
    return (
      <div className="grid gap-6 md:grid-cols-3" aria-busy="true" aria-label="Loading featured projects">
        {Array.from({ length: FEATURED_PROJECTS_LIMIT }, (_, i) => (
          <Card key={i} className="p-6">
            <Skeleton className="h-5 w-2/3" />
            <Skeleton className="mt-3 h-4 w-full" />
            <Skeleton className="mt-2 h-4 w-4/5" />
            <Skeleton className="mt-6 h-9 w-28" />
          </Card>
        ))}
      </div>
    )
  }

  const deployments = featured.data ?? []
  if (deployments.length === 0) {
    const action = emptyAction ?? { label: 'Deploy your project', to: paths.register.getHref() }
    return (
      <EmptyState
        icon={Rocket}
        title="No featured projects yet"
        description="Be the first to deploy a project and see it featured here."
        action={
          <Link to={action.to} className={buttonClasses({ variant: 'primary' })}>
            {action.label}
          </Link>
        }
      />
    )
  }

  return (
    <ul className="grid grid-cols-1 gap-6 md:grid-cols-3">
      {deployments.map((d) => (
        <li key={d._id} className="min-w-0">
          <FeaturedCard deployment={d} />
        </li>
      ))}
    </ul>
  )
}

function FeaturedCard({ deployment }: { deployment: PublicDeployment }) {
  const { project, user } = deployment
  const ref = useRef<HTMLDivElement>(null)
  useWakeHint(ref, deployment._id, deployment.sleeping)
  return (
    <Card ref={ref} className="flex h-full flex-col p-6">
      <div className="flex items-start gap-3">
        <AppTypeIcon type={project.type} />
        <h3 className="min-w-0 flex-1 self-center truncate font-semibold text-zinc-900 dark:text-zinc-50" title={project.name}>
          {project.name}
        </h3>
        <Badge tone="accent" className="shrink-0">
          {appTypeLabel(project.type)}
        </Badge>
      </div>
      <p className="mt-3 line-clamp-3 flex-1 text-sm text-zinc-600 dark:text-zinc-400">
        {project.description || 'No description'}
      </p>
      <div className="mt-4 flex items-center justify-between gap-3 text-sm">
        <p className="min-w-0 truncate text-zinc-700 dark:text-zinc-300">
          {user.fullName} <span className="text-zinc-500 dark:text-zinc-400">@{user.username}</span>
        </p>
        <time dateTime={deployment.createdAt} className="shrink-0 text-zinc-500 dark:text-zinc-400">
          {formatRelativeTime(deployment.createdAt)}
        </time>
      </div>
      {deployment.sleeping ? (
        <div className="mt-3">
          <SleepingBadge />
        </div>
      ) : null}
      <a
        href={deployment.url}
        target="_blank"
        rel="noopener noreferrer"
        onClick={() => void recordView(deployment._id)}
        className={buttonClasses({ variant: 'secondary', size: 'sm', className: 'mt-5 self-start' })}
      >
        Visit App
        <ExternalLink className="size-3.5" aria-hidden="true" />
        <span className="sr-only">(opens in a new tab)</span>
      </a>
    </Card>
  )
}
