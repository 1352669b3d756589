import { Link } from 'react-router'
import { Plus } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'
import { ProjectsGrid } from '@/features/projects/components/projects-grid'

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
      <ProjectsGrid />
    </>
  )
}
