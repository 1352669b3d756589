import { Link } from 'react-router'
import { Compass } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { ComingNext } from '@/components/ui/coming-next'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'
import { useAuth } from '@/lib/auth'

/** /discover: the public gallery, for visitors and users (SPEC §2 Discover). */
export function DiscoverRoute() {
  const { user } = useAuth()
  return (
    <>
      <PageHeader title="Discover" description="Live apps built and deployed by the Gantry community." />
      <ComingNext
        icon={Compass}
        description="Search, filter and like live student apps here, with a trending list of the week."
        action={
          user ? (
            <Link to={paths.newProject.getHref()} className={buttonClasses({ variant: 'secondary' })}>
              Deploy your own app
            </Link>
          ) : (
            <Link to={paths.register.getHref()} className={buttonClasses({ variant: 'secondary' })}>
              Get Started
            </Link>
          )
        }
      />
    </>
  )
}
