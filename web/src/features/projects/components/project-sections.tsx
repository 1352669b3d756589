import type { ReactNode } from 'react'
import { Link } from 'react-router'
import { ExternalLink, Rocket } from 'lucide-react'
import { Badge } from '@/components/ui/badge'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { DetailList } from '@/components/ui/detail-list'
import { EmptyState } from '@/components/ui/empty-state'
import { PROJECT_RECENT_DEPLOYMENTS } from '@/config/constants'
import { paths } from '@/config/paths'
import { formatDate, formatDateTime } from '@/utils/format'
import { frameworkName } from '../frameworks'
import type { Project, ProjectDeployment } from '../types'

const NOT_SPECIFIED = 'Not specified'

function orNotSpecified(value: string | undefined) {
  return value ? value : <span className="font-sans text-zinc-500 dark:text-zinc-400">{NOT_SPECIFIED}</span>
}

export function RepositoryInfoCard({ project }: { project: Project }) {
  const repo = project.repository
  return (
    <Card>
      <CardHeader>
        <CardTitle>Repository Information</CardTitle>
      </CardHeader>
      <CardContent>
        <DetailList
          items={[
            { label: 'Name', value: repo.name || '—' },
            { label: 'Full name', value: repo.fullName || '—', mono: true },
            { label: 'Branch', value: project.branch || repo.defaultBranch || '—', mono: true },
            {
              label: 'Visibility',
              value: <Badge tone={repo.private ? 'warning' : 'neutral'}>{repo.private ? 'Private' : 'Public'}</Badge>,
            },
            {
              label: 'Code host',
              value: repo.url ? (
                <a
                  href={repo.url}
                  target="_blank"
                  rel="noopener noreferrer"
                  className="inline-flex items-center gap-1 rounded font-medium text-indigo-600 hover:underline dark:text-indigo-400"
                >
                  View repository
                  <ExternalLink className="size-3.5" aria-hidden="true" />
                </a>
              ) : (
                '—'
              ),
            },
          ]}
        />
      </CardContent>
    </Card>
  )
}

export function BuildConfigCard({ project }: { project: Project }) {
  const build = project.buildConfig ?? { buildCommand: '', outputDirectory: '', installCommand: '' }
  const items = [
    { label: 'Build command', value: orNotSpecified(build.buildCommand), mono: true },
    { label: 'Output directory', value: orNotSpecified(build.outputDirectory), mono: true },
    { label: 'Install command', value: orNotSpecified(build.installCommand), mono: true },
  ]
  if (build.startCommand) items.push({ label: 'Start command', value: build.startCommand, mono: true })
  items.push({ label: 'Project type', value: orNotSpecified(frameworkName(project.type)), mono: false })
  return (
    <Card>
      <CardHeader>
        <CardTitle>Build Configuration</CardTitle>
      </CardHeader>
      <CardContent>
        <DetailList items={items} />
      </CardContent>
    </Card>
  )
}

export function LatestCommitCard({ project }: { project: Project }) {
  const commit = project.repository?.lastCommit
  return (
    <Card>
      <CardHeader>
        <CardTitle>Latest Commit</CardTitle>
      </CardHeader>
      <CardContent>
        {commit ? (
          <DetailList
            items={[
              { label: 'Message', value: commit.message || '—' },
              { label: 'Author', value: commit.author || '—' },
              { label: 'Date', value: formatDateTime(commit.date) || '—' },
              { label: 'Commit', value: commit.sha ? commit.sha.slice(0, 7) : '—', mono: true },
            ]}
          />
        ) : (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            No commit recorded yet. Sync the project to fetch the branch&apos;s latest commit.
          </p>
        )}
      </CardContent>
    </Card>
  )
}

type RecentDeploymentsCardProps = {
  deployments: ProjectDeployment[] | undefined
  /** Renders a deployment's status badge (owned by the deployments feature). */
  statusBadge: (status: string, id: string) => ReactNode
}

export function RecentDeploymentsCard({ deployments, statusBadge }: RecentDeploymentsCardProps) {
  const recent = (deployments ?? []).slice(0, PROJECT_RECENT_DEPLOYMENTS)
  return (
    <Card>
      <CardHeader>
        <CardTitle>Recent Deployments</CardTitle>
      </CardHeader>
      <CardContent>
        {recent.length === 0 ? (
          <EmptyState
            icon={Rocket}
            title="No deployments yet"
            description="Press Deploy to build this project and put it live."
            className="py-8"
          />
        ) : (
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {recent.map((d) => (
              <li key={d._id} className="flex flex-wrap items-center gap-x-4 gap-y-1 py-3 first:pt-0 last:pb-0">
                <div className="min-w-0 flex-1">
                  <p className="truncate font-mono text-sm text-zinc-900 dark:text-zinc-100">{d.subdomain}</p>
                  <p className="text-xs text-zinc-500 dark:text-zinc-400">
                    {formatDate(d.createdAt)} · v{d.version}
                  </p>
                </div>
                {statusBadge(d.status, d._id)}
                <Link
                  to={paths.deployment.getHref(d._id)}
                  className="rounded text-sm font-medium text-indigo-600 hover:underline dark:text-indigo-400"
                >
                  View
                </Link>
              </li>
            ))}
          </ul>
        )}
      </CardContent>
    </Card>
  )
}
