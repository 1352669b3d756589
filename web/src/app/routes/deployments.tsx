import { Link } from 'react-router'
import { Rocket } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { ComingNext } from '@/components/ui/coming-next'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'

/** /deployments: every deployment of the user (SPEC §2 Deployments list). */
export function DeploymentsRoute() {
  return (
    <>
      <PageHeader title="Deployments" description="Every build and release of your projects." />
      <ComingNext
        icon={Rocket}
        description="Your deployments will be listed here, filterable by status, with stop, restart and logs."
        action={
          <Link to={paths.projects.getHref()} className={buttonClasses({ variant: 'secondary' })}>
            Go to Projects
          </Link>
        }
      />
    </>
  )
}
