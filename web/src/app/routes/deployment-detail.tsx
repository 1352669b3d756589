import { Link, useParams } from 'react-router'
import { ArrowLeft, Terminal } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { ComingNext } from '@/components/ui/coming-next'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'

/** /deployments/:id: one deployment with its logs (SPEC §2 Deployment detail). */
export function DeploymentDetailRoute() {
  const { id = '' } = useParams()
  return (
    <>
      <PageHeader title="Deployment" description={<span className="font-mono text-xs">{id}</span>} />
      <ComingNext
        icon={Terminal}
        description="Build information, commit, environment variables and live logs of this deployment will show here."
        action={
          <Link to={paths.deployments.getHref()} className={buttonClasses({ variant: 'secondary' })}>
            <ArrowLeft className="size-4" aria-hidden="true" />
            Back to Deployments
          </Link>
        }
      />
    </>
  )
}
