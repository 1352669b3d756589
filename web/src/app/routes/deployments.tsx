import { PageHeader } from '@/components/ui/page-header'
import { DeploymentsList } from '@/features/deployments/components/deployments-list'

/** /deployments: every deployment of the user (SPEC §2 Deployments list). */
export function DeploymentsRoute() {
  return (
    <>
      <PageHeader title="Deployments" description="Every build and release of your projects." />
      <DeploymentsList />
    </>
  )
}
