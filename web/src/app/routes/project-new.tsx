import { useNavigate, useSearchParams } from 'react-router'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'
import { useDeployProject } from '@/features/deployments/api/create-deployment'
import { NewProject } from '@/features/projects/components/new-project/new-project'
import { useAuth } from '@/lib/auth'

/** /projects/new[?repo=id]: create a project from a repository and deploy it (SPEC §2 New project). */
export function NewProjectRoute() {
  const [params] = useSearchParams()
  const navigate = useNavigate()
  const { user } = useAuth()
  const { deploy, isPending } = useDeployProject()
  if (!user) return null
  return (
    <>
      <PageHeader
        title="New Project"
        description="Import a repository from your GitHub account or any public repository."
      />
      <NewProject
        user={user}
        preselectRepoId={params.get('repo')}
        busy={isPending}
        onCancel={() => navigate(paths.projects.getHref())}
        onCreated={(project) =>
          deploy(project._id, { onError: () => navigate(paths.project.getHref(project._id)) })
        }
      />
    </>
  )
}
