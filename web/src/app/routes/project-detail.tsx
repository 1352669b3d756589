import { useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { CalendarClock, FolderGit2, GitFork, Pencil, RefreshCw, Rocket, Trash2 } from 'lucide-react'
import { BackLink } from '@/components/ui/back-link'
import { Button, buttonClasses } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { StatTile } from '@/components/ui/detail-list'
import { ConfirmDialog } from '@/components/ui/dialog'
import { LoadErrorState } from '@/components/ui/load-error-state'
import { Skeleton } from '@/components/ui/skeleton'
import { REDIRECT_AFTER_ACTION_MS } from '@/config/constants'
import { paths } from '@/config/paths'
import { useDeployProject } from '@/features/deployments/api/create-deployment'
import { DomainsCard } from '@/features/domains/components/domains-card'
import { DeploymentStatusBadge } from '@/features/deployments/components/deployment-status'
import { HistoryCard } from '@/features/deployments/components/history-card'
import { PreviewsCard } from '@/features/deployments/components/previews-card'
import { ProductionCard } from '@/features/deployments/components/production-card'
import { useDeleteProject } from '@/features/projects/api/delete-project'
import { useProject } from '@/features/projects/api/get-project'
import { useSyncProject } from '@/features/projects/api/sync-project'
import { useAlwaysOn, useShowInDiscover } from '@/features/projects/api/update-project'
import { GitCard } from '@/features/projects/components/git-card'
import { DataCard } from '@/features/projects/components/data-card'
import { useProjectData } from '@/features/projects/api/get-data'
import {
  BuildConfigCard,
  LatestCommitCard,
  RecentDeploymentsCard,
  RepositoryInfoCard,
} from '@/features/projects/components/project-sections'
import { ProjectStatusBadge } from '@/features/projects/components/project-status-badge'
import { AlwaysOnSwitch } from '@/features/projects/components/always-on'
import { ShowInDiscoverSwitch, showsInDiscover } from '@/features/projects/components/show-in-discover'
import { ProjectTypeIcon } from '@/features/projects/components/project-type-icon'
import { projectLiveURL } from '@/features/projects/live-url'
import { useRetry } from '@/lib/use-retry'
import { formatDate, formatSize } from '@/utils/format'

export const DELETE_PROJECT_CONFIRMATION =
  'Are you sure you want to delete this project? This action cannot be undone.'

/** The delete confirmation, naming the data folder that goes with the project. */
export function deleteProjectConfirmation(dataSize: number): string {
  if (dataSize <= 0) return DELETE_PROJECT_CONFIRMATION
  return `${DELETE_PROJECT_CONFIRMATION} Its data folder (/data, ${formatSize(dataSize)}) is deleted with it.`
}

/** /projects/:id: one project (SPEC §2 Project detail). */
export function ProjectDetailRoute() {
  const { id = '' } = useParams()
  const navigate = useNavigate()
  const query = useProject(id)
  const failure = useRetry(query)
  const sync = useSyncProject()
  const discover = useShowInDiscover(id)
  const alwaysOn = useAlwaysOn(id)
  const data = useProjectData(id)
  const { deploy, isPending: deploying } = useDeployProject()
  const [confirmDelete, setConfirmDelete] = useState(false)
  const [leaving, setLeaving] = useState(false)
  const remove = useDeleteProject({
    onSuccess: () => {
      setConfirmDelete(false)
      setLeaving(true)
      setTimeout(() => navigate(paths.projects.getHref()), REDIRECT_AFTER_ACTION_MS)
    },
  })

  if (query.isError || failure.retrying) {
    return (
      <LoadErrorState
        notFoundTitle="Project not found"
        title="Could not load this project"
        failure={failure}
        back={
          <BackLink to={paths.projects.getHref()} variant="button">
            Back to Projects
          </BackLink>
        }
      />
    )
  }

  if (query.isPending) {
    return (
      <div aria-busy="true" aria-label="Loading project">
        <title>Project · Gantry</title>
        <Skeleton className="h-8 w-64" />
        <Skeleton className="mt-3 h-4 w-96 max-w-full" />
        <div className="mt-8 grid gap-4 sm:grid-cols-3">
          {[0, 1, 2].map((i) => (
            <Skeleton key={i} className="h-20" />
          ))}
        </div>
        <div className="mt-6 grid gap-6 lg:grid-cols-2">
          {[0, 1].map((i) => (
            <Skeleton key={i} className="h-56" />
          ))}
        </div>
      </div>
    )
  }

  const project = query.data
  const lastUpdated = formatDate(project.repository?.lastCommit?.date)
  return (
    <>
      <title>{`${project.name} · Gantry`}</title>
      <BackLink to={paths.projects.getHref()}>Back to Projects</BackLink>
      <div className="mb-8 flex flex-col gap-4 lg:flex-row lg:items-start lg:justify-between">
        <div className="flex min-w-0 items-start gap-4">
          <ProjectTypeIcon type={project.type} className="size-12" />
          <div className="min-w-0">
            <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
              <h1 className="truncate text-2xl font-semibold tracking-tight text-zinc-900 dark:text-zinc-50">
                {project.name}
              </h1>
              <ProjectStatusBadge status={project.status} sleeping={project.sleeping} />
            </div>
            <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
              {project.description || 'No description'}
            </p>
          </div>
        </div>
        <div className="flex shrink-0 flex-wrap items-center gap-2">
          <Button
            variant="secondary"
            loading={sync.isPending}
            onClick={() => sync.mutate(project._id)}
            icon={<RefreshCw className="size-4" aria-hidden="true" />}
          >
            Sync
          </Button>
          <Button
            loading={deploying}
            onClick={() => deploy(project._id)}
            icon={<Rocket className="size-4" aria-hidden="true" />}
          >
            Deploy
          </Button>
          <Link to={paths.editProject.getHref(project._id)} className={buttonClasses({ variant: 'secondary' })}>
            <Pencil className="size-4" aria-hidden="true" />
            Edit
          </Link>
          <Button
            variant="danger"
            disabled={leaving}
            onClick={() => setConfirmDelete(true)}
            icon={<Trash2 className="size-4" aria-hidden="true" />}
          >
            Delete
          </Button>
        </div>
      </div>

      <div className="mb-6 grid gap-4 sm:grid-cols-3">
        <StatTile
          label="Repository"
          value={project.repository?.fullName || '—'}
          mono
          icon={<GitFork className="size-3.5" aria-hidden="true" />}
        />
        <StatTile
          label="Last updated"
          value={lastUpdated || 'Never'}
          icon={<CalendarClock className="size-3.5" aria-hidden="true" />}
        />
        <StatTile
          label="Status"
          value={<ProjectStatusBadge status={project.status} sleeping={project.sleeping} />}
          icon={<FolderGit2 className="size-3.5" aria-hidden="true" />}
        />
      </div>

      <div className="mb-6 space-y-6">
        <ProductionCard projectId={project._id} activeId={project.activeDeployment?._id} />
        <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-2">
          <PreviewsCard projectId={project._id} />
          <GitCard project={project} />
        </div>
        <HistoryCard projectId={project._id} activeId={project.activeDeployment?._id} />
      </div>

      <Card className="mb-6">
        <CardContent>
          <ShowInDiscoverSwitch
            checked={discover.isPending ? Boolean(discover.variables) : showsInDiscover(project)}
            onChange={(show) => discover.mutate(show)}
            isPrivate={Boolean(project.repository?.private)}
            disabled={discover.isPending}
          />
          <AlwaysOnSwitch
            className="mt-4 flex"
            checked={alwaysOn.isPending ? Boolean(alwaysOn.variables) : Boolean(project.alwaysOn)}
            onChange={(on) => alwaysOn.mutate(on)}
            disabled={alwaysOn.isPending}
          />
        </CardContent>
      </Card>

      <DomainsCard projectId={project._id} liveUrl={projectLiveURL(project)} />

      {project.buildConfig?.startCommand || (data.data?.folders.length ?? 0) > 0 ? (
        <DataCard projectId={project._id} />
      ) : null}

      <div className="grid gap-6 lg:grid-cols-2">
        <RepositoryInfoCard project={project} />
        <BuildConfigCard project={project} />
        <LatestCommitCard project={project} />
        <RecentDeploymentsCard
          deployments={project.deployments}
          statusBadge={(status, id) => (
            <DeploymentStatusBadge
              status={status}
              sleeping={Boolean(project.sleeping) && id === project.activeDeployment?._id}
            />
          )}
        />
      </div>

      <ConfirmDialog
        open={confirmDelete}
        title="Delete project"
        message={deleteProjectConfirmation(data.data?.size ?? 0)}
        confirmLabel="Delete"
        loading={remove.isPending}
        onConfirm={() => remove.mutate(project._id)}
        onCancel={() => setConfirmDelete(false)}
      />
    </>
  )
}
