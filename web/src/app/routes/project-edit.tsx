import { Link, useParams } from 'react-router'
import { ArrowLeft, FolderPen } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { ComingNext } from '@/components/ui/coming-next'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'

/** /projects/:id/edit: a project's settings (SPEC §2 Project edit). */
export function EditProjectRoute() {
  const { id = '' } = useParams()
  return (
    <>
      <PageHeader title="Edit Project" description="Name, branch, description and build settings." />
      <ComingNext
        icon={FolderPen}
        description="You will change this project's name, branch and build commands here."
        action={
          <Link to={paths.project.getHref(id)} className={buttonClasses({ variant: 'secondary' })}>
            <ArrowLeft className="size-4" aria-hidden="true" />
            Back to project
          </Link>
        }
      />
    </>
  )
}
