import { useState } from 'react'
import { Link } from 'react-router'
import { Rocket } from 'lucide-react'
import { Button, buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { EmptyState } from '@/components/ui/empty-state'
import { SegmentedControl } from '@/components/ui/segmented-control'
import { Skeleton } from '@/components/ui/skeleton'
import { paths } from '@/config/paths'
import { useDeployments } from '../api/get-deployments'
import { DEPLOYMENT_FILTERS, filterDeployments, type DeploymentFilter } from '../status'
import { DeploymentCard } from './deployment-card'

/** The filter tabs and the cards of the Deployments list (SPEC §2). */
export function DeploymentsList() {
  const query = useDeployments()
  const [filter, setFilter] = useState<DeploymentFilter>('all')

  const shown = filterDeployments(query.data ?? [], filter)
  return (
    <>
      <SegmentedControl
        label="Filter deployments by status"
        value={filter}
        onChange={setFilter}
        options={DEPLOYMENT_FILTERS}
        className="mb-6"
      />
      {query.isPending ? (
        <div className="space-y-4" aria-busy="true" aria-label="Loading deployments">
          {[0, 1, 2].map((i) => (
            <Card key={i} className="p-5">
              <div className="flex items-center gap-3">
                <Skeleton className="size-10 rounded-lg" />
                <div className="flex-1 space-y-2">
                  <Skeleton className="h-4 w-48" />
                  <Skeleton className="h-3 w-32" />
                </div>
              </div>
              <Skeleton className="mt-4 h-9 w-full" />
            </Card>
          ))}
        </div>
      ) : shown.length === 0 ? (
        <EmptyState
          icon={Rocket}
          title="No deployments found"
          description={
            filter === 'all'
              ? 'Deploy a project and its builds will show up here.'
              : 'No deployment has this status right now.'
          }
          action={
            filter === 'all' ? (
              <Link to={paths.projects.getHref()} className={buttonClasses({ variant: 'secondary' })}>
                Go to Projects
              </Link>
            ) : (
              <Button variant="secondary" onClick={() => setFilter('all')}>
                Show all deployments
              </Button>
            )
          }
        />
      ) : (
        <ul className="space-y-4">
          {shown.map((d) => (
            <li key={d._id}>
              <DeploymentCard deployment={d} />
            </li>
          ))}
        </ul>
      )}
    </>
  )
}
