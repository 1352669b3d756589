import { Avatar } from '@/components/ui/avatar'
import { Badge } from '@/components/ui/badge'
import { PageHeader } from '@/components/ui/page-header'
import { AccountDatesCard, AccountStatusCard } from '@/features/profile/components/account-status-card'
import { GitHubStatusCard } from '@/features/profile/components/github-status-card'
import { ProfileForm } from '@/features/profile/components/profile-form'
import { SessionsCard } from '@/features/profile/components/sessions-card'
import { StatsCard } from '@/features/profile/components/stats-card'
import { StorageCard } from '@/features/profile/components/storage-usage'
import { useAuth } from '@/lib/auth'
import { capitalize } from '@/utils/format'
import { roleOf } from '@/utils/user'

/** /profile (SPEC §2 Profile). */
export function ProfileRoute() {
  const { user } = useAuth()
  if (!user) return null
  return (
    <>
      <PageHeader title="Profile" description="Your personal details, account status and numbers." />
      <div className="mb-8 flex items-center gap-4">
        <Avatar src={user.avatar || undefined} name={user.fullName} username={user.username} size="lg" />
        <div className="min-w-0">
          <p className="truncate text-lg font-semibold text-zinc-900 dark:text-zinc-50">{user.fullName}</p>
          <p className="flex flex-wrap items-center gap-2 text-sm text-zinc-600 dark:text-zinc-400">
            <span className="truncate">@{user.username}</span>
            <Badge tone="accent">{capitalize(roleOf(user))}</Badge>
          </p>
        </div>
      </div>
      <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_21rem]">
        <div className="min-w-0 space-y-6">
          {/* Remount the form when the saved user changes, so it shows the saved values. */}
          <ProfileForm key={`${user.fullName}|${user.username}|${user.email}`} user={user} />
          <StatsCard />
        </div>
        <div className="space-y-6">
          <AccountStatusCard user={user} />
          <StorageCard />
          <GitHubStatusCard user={user} />
          <AccountDatesCard user={user} />
          <SessionsCard />
        </div>
      </div>
    </>
  )
}
