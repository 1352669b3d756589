import { Link } from 'react-router'
import { Bell } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { ComingNext } from '@/components/ui/coming-next'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'

/** /notifications (SPEC §2). */
export function NotificationsRoute() {
  return (
    <>
      <PageHeader title="Notifications" description="Updates about your projects and deployments." />
      <ComingNext
        icon={Bell}
        description="Build results, deployment changes and account news will be collected here."
        action={
          <Link to={paths.dashboard.getHref()} className={buttonClasses({ variant: 'secondary' })}>
            Back to Dashboard
          </Link>
        }
      />
    </>
  )
}
