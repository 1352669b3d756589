import { Navigate, useParams } from 'react-router'
import { BackLink } from '@/components/ui/back-link'
import { PageHeader } from '@/components/ui/page-header'
import { Skeleton } from '@/components/ui/skeleton'
import { paths } from '@/config/paths'
import { useProject } from '@/features/projects/api/get-project'
import { EditProjectForm } from '@/features/projects/components/edit-project-form'

/** /projects/:id/edit: a project's settings (SPEC §2 Project edit). */
export function EditProjectRoute() {
  const { id = '' } = useParams()
  const query = useProject(id)

  // If loading fails, back to the list.
  if (query.isError) return <Navigate to={paths.projects.getHref()} replace />

  return (
    <>
      <BackLink to={paths.project.getHref(id)}>Back to Project</BackLink>
      <PageHeader
        title="Edit Project"
        description={query.data ? `Settings of ${query.data.name}` : 'Name, branch, description and build settings.'}
      />
      {query.data ? (
        <EditProjectForm key={query.data._id} project={query.data} />
      ) : (
        <div aria-busy="true" aria-label="Loading project" className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_20rem]">
          <Skeleton className="h-[32rem]" />
          <Skeleton className="h-64" />
        </div>
      )}
    </>
  )
}
