import { Link } from 'react-router'
import { Settings } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'

/** /settings: a placeholder (SPEC §2 Settings). */
export function SettingsRoute() {
  return (
    <>
      <PageHeader title="Settings" description="Preferences for your account." />
      <EmptyState
        icon={Settings}
        title="Coming soon"
        description="The settings page is coming soon. Until then, you can edit your details on your profile."
        action={
          <Link to={paths.profile.getHref()} className={buttonClasses({ variant: 'secondary' })}>
            Go to Profile
          </Link>
        }
      />
    </>
  )
}
