import { Link, useParams } from 'react-router'
import { ArrowLeft, FolderGit2 } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { ComingNext } from '@/components/ui/coming-next'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'

/** /projects/:id: one project (SPEC §2 Project detail). */
export function ProjectDetailRoute() {
  const { id = '' } = useParams()
  return (
    <>
      <PageHeader
        title="Project Details"
        description={<span className="font-mono text-xs">{id}</span>}
        actions={
          <Link to={paths.editProject.getHref(id)} className={buttonClasses({ variant: 'secondary' })}>
            Edit
          </Link>
        }
      />
      <ComingNext
        icon={FolderGit2}
        description="The repository, build configuration, latest commit and recent deployments of this project will show here."
        action={
          <Link to={paths.projects.getHref()} className={buttonClasses({ variant: 'secondary' })}>
            <ArrowLeft className="size-4" aria-hidden="true" />
            Back to Projects
          </Link>
        }
      />
    </>
  )
}
