import { Link } from 'react-router'
import { ArrowRight, CalendarClock, ExternalLink, GitBranch } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { paths } from '@/config/paths'
import { formatDate } from '@/utils/format'
import { projectLiveURL } from '../live-url'
import type { Project } from '../types'
import { ProjectStatusBadge } from './project-status-badge'
import { ProjectTypeIcon } from './project-type-icon'

/** One project in the Projects grid (SPEC §2 Projects list). */
export function ProjectCard({ project }: { project: Project }) {
  const repo = project.repository
  const lastCommit = formatDate(repo?.lastCommit?.date)
  const build = project.buildConfig ?? { buildCommand: '', outputDirectory: '', installCommand: '' }
  return (
    <Card className="flex h-full flex-col p-5" data-testid="project-card">
      <div className="flex items-start gap-3">
        <ProjectTypeIcon type={project.type} />
        <div className="min-w-0 flex-1">
          <h3 className="truncate font-semibold text-zinc-900 dark:text-zinc-50">
            <Link
              to={paths.project.getHref(project._id)}
              className="rounded hover:underline focus-visible:outline-offset-1"
            >
              {project.name}
            </Link>
          </h3>
          <p className="truncate font-mono text-xs text-zinc-500 dark:text-zinc-400">{repo?.fullName}</p>
        </div>
        <ProjectStatusBadge status={project.status} sleeping={project.sleeping} />
      </div>

      <p className="mt-3 line-clamp-2 min-h-10 text-sm text-zinc-600 dark:text-zinc-400">
        {project.description || 'No description'}
      </p>

      <dl className="mt-4 space-y-1.5 text-xs">
        <div className="flex gap-2">
          <dt className="w-14 shrink-0 text-zinc-500">Build</dt>
          <dd className="truncate font-mono text-zinc-700 dark:text-zinc-300">{build.buildCommand || 'None'}</dd>
        </div>
        <div className="flex gap-2">
          <dt className="w-14 shrink-0 text-zinc-500">Output</dt>
          <dd className="truncate font-mono text-zinc-700 dark:text-zinc-300">{build.outputDirectory || '—'}</dd>
        </div>
      </dl>

      <div className="mt-4 flex flex-wrap items-center gap-x-4 gap-y-1 text-xs text-zinc-500 dark:text-zinc-400">
        <span className="inline-flex items-center gap-1">
          <CalendarClock className="size-3.5" aria-hidden="true" />
          {lastCommit ? `Updated ${lastCommit}` : 'Never updated'}
        </span>
        <span className="inline-flex min-w-0 items-center gap-1 font-mono">
          <GitBranch className="size-3.5 shrink-0" aria-hidden="true" />
          <span className="truncate">{project.branch || repo?.defaultBranch}</span>
        </span>
      </div>

      <div className="mt-auto pt-5">
      <div className="flex flex-wrap items-center gap-2 border-t border-zinc-100 pt-4 dark:border-zinc-800">
        <Link
          to={paths.project.getHref(project._id)}
          className={buttonClasses({ variant: 'secondary', size: 'sm' })}
          aria-label={`View Details of ${project.name}`}
        >
          View Details
          <ArrowRight className="size-4" aria-hidden="true" />
        </Link>
        {project.status === 'deployed' ? (
          <a
            href={projectLiveURL(project)}
            target="_blank"
            rel="noopener noreferrer"
            className={buttonClasses({ variant: 'ghost', size: 'sm' })}
            aria-label={`View Live: ${project.name}`}
          >
            <ExternalLink className="size-4" aria-hidden="true" />
            View Live
          </a>
        ) : null}
      </div>
      </div>
    </Card>
  )
}
