import { Link } from 'react-router'
import { GitBranch } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { ComingNext } from '@/components/ui/coming-next'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'

/** /github-integration: the connected GitHub account (SPEC §2 GitHub integration). */
export function GitHubIntegrationRoute() {
  return (
    <>
      <PageHeader title="GitHub Integration" description="Connect GitHub to deploy your own repositories." />
      <ComingNext
        icon={GitBranch}
        description="Connect your GitHub account here to browse your repositories and deploy them in one click."
        action={
          <Link to={paths.newProject.getHref()} className={buttonClasses({ variant: 'secondary' })}>
            Deploy a public repository
          </Link>
        }
      />
    </>
  )
}
