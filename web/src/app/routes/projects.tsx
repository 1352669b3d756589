import { Link } from 'react-router'
import { FolderGit2, Plus } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { ComingNext } from '@/components/ui/coming-next'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'

/** /projects: the user's projects (SPEC §2 Projects list). */
export function ProjectsRoute() {
  return (
    <>
      <PageHeader
        title="My Projects"
        description="Repositories you have set up to build and deploy."
        actions={
          <Link to={paths.newProject.getHref()} className={buttonClasses()}>
            <Plus className="size-4" aria-hidden="true" />
            New Project
          </Link>
        }
      />
      <ComingNext
        icon={FolderGit2}
        description="Your projects will be listed here with their status, build settings and live links."
        action={
          <Link to={paths.newProject.getHref()} className={buttonClasses({ variant: 'secondary' })}>
            Create a project
          </Link>
        }
      />
    </>
  )
}
