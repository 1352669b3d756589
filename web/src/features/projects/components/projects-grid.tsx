import { Link } from 'react-router'
import { FolderGit2, Plus } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { paths } from '@/config/paths'
import { useProjects } from '../api/get-projects'
import { ProjectCard } from './project-card'

/** The grid of the user's projects, with its skeleton and empty state. */
export function ProjectsGrid() {
  const query = useProjects()

  if (query.isPending) {
    return (
      <div className="grid gap-4 sm:grid-cols-2 xl:grid-cols-3" aria-busy="true" aria-label="Loading projects">
        {[0, 1, 2].map((i) => (
          <Card key={i} className="p-5">
            <div className="flex items-center gap-3">
              <Skeleton className="size-10 rounded-lg" />
              <div className="flex-1 space-y-2">
                <Skeleton className="h-4 w-2/3" />
                <Skeleton className="h-3 w-1/2" />
              </div>
            </div>
            <Skeleton className="mt-4 h-10 w-full" />
            <Skeleton className="mt-4 h-3 w-3/4" />
            <Skeleton className="mt-2 h-3 w-1/2" />
            <Skeleton className="mt-6 h-8 w-28" />
          </Card>
        ))}
      </div>
    )
  }

  const projects = query.data ?? []
  if (projects.length === 0) {
    return (
      <EmptyState
        icon={FolderGit2}
        title="No projects yet"
        description="Import a repository and Gantry builds it and puts it live on its own subdomain."
        action={
          <Link to={paths.newProject.getHref()} className={buttonClasses()}>
            <Plus className="size-4" aria-hidden="true" />
            Create Your First Project
          </Link>
        }
      />
    )
  }

  return (
    <ul className="grid gap-4 sm:grid-cols-2 xl:grid-cols-3">
      {projects.map((project) => (
        <li key={project._id}>
          <ProjectCard project={project} />
        </li>
      ))}
    </ul>
  )
}
