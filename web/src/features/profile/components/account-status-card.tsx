import type { ReactNode } from 'react'
import { Badge } from '@/components/ui/badge'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import type { User } from '@/types/api'
import { capitalize, formatDate, formatDateTime } from '@/utils/format'
import { planLabel, planLimitsLabel, roleOf } from '@/utils/user'

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="flex items-center justify-between gap-4 py-2.5">
      <dt className="shrink-0 text-sm text-zinc-600 dark:text-zinc-400">{label}</dt>
      <dd className="text-right text-sm font-medium text-zinc-900 dark:text-zinc-100">{children}</dd>
    </div>
  )
}

/** Role, subscription, verified and active (SPEC §2 Profile). */
export function AccountStatusCard({ user }: { user: User }) {
  return (
    <Card>
      <CardHeader>
        <CardTitle>Account status</CardTitle>
      </CardHeader>
      <CardContent className="pt-2">
        <dl className="divide-y divide-zinc-200 dark:divide-zinc-800">
          <Row label="Role">
            <Badge tone="accent">{capitalize(roleOf(user))}</Badge>
          </Row>
          <Row label="Subscription">{planLabel(user)}</Row>
          <Row label="Plan limits">
            <span className="font-normal whitespace-nowrap text-zinc-700 dark:text-zinc-300">{planLimitsLabel(user)}</span>
          </Row>
          <Row label="Verified">
            {user.isVerified ? (
              <Badge tone="success" dot>
                Verified
              </Badge>
            ) : (
              <Badge tone="warning" dot>
                Not verified
              </Badge>
            )}
          </Row>
          <Row label="Active">
            {user.isActive === false ? (
              <Badge tone="danger" dot>
                Inactive
              </Badge>
            ) : (
              <Badge tone="success" dot>
                Active
              </Badge>
            )}
          </Row>
        </dl>
      </CardContent>
    </Card>
  )
}

/** Member since and last login (SPEC §2 Profile). */
export function AccountDatesCard({ user }: { user: User }) {
  return (
    <Card>
      <CardHeader>
        <CardTitle>Activity</CardTitle>
      </CardHeader>
      <CardContent className="pt-2">
        <dl className="divide-y divide-zinc-200 dark:divide-zinc-800">
          <Row label="Member since">{formatDate(user.createdAt) || '—'}</Row>
          <Row label="Last login">{formatDateTime(user.lastLogin) || 'Never'}</Row>
        </dl>
      </CardContent>
    </Card>
  )
}
