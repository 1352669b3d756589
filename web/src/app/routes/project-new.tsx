import { Link, useSearchParams } from 'react-router'
import { ArrowLeft, FolderPlus } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { ComingNext } from '@/components/ui/coming-next'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'

/** /projects/new[?repo=id]: create a project from a repository (SPEC §2 New project). */
export function NewProjectRoute() {
  const [params] = useSearchParams()
  const repo = params.get('repo')
  return (
    <>
      <PageHeader
        title="New Project"
        description="Import a repository from your GitHub account or any public repository."
      />
      <ComingNext
        icon={FolderPlus}
        description={
          repo
            ? `Repository ${repo} will be preselected here, ready to configure and deploy.`
            : 'Choose a repository, review its build settings and deploy it, all from this screen.'
        }
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
