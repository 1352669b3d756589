import { Badge, type BadgeTone } from '@/components/ui/badge'
import { SLEEPING_HINT } from '@/config/constants'

const looks: Record<string, { label: string; tone: BadgeTone; pulse?: boolean }> = {
  deployed: { label: 'Live', tone: 'success' },
  building: { label: 'Building', tone: 'warning', pulse: true },
  failed: { label: 'Failed', tone: 'danger' },
  draft: { label: 'Draft', tone: 'neutral' },
}

/**
 * deployed = Live (Sleeping when its server app sleeps), building = Building, failed = Failed,
 * draft = Draft; anything else raw and grey.
 */
export function ProjectStatusBadge({ status, sleeping }: { status: string; sleeping?: boolean }) {
  if (sleeping && status === 'deployed') {
    return (
      <Badge tone="info" dot data-status="sleeping" title={SLEEPING_HINT}>
        Sleeping
      </Badge>
    )
  }
  const look = looks[status]
  if (!look) return <Badge tone="neutral">{status}</Badge>
  return (
    <Badge tone={look.tone} dot pulse={look.pulse}>
      {look.label}
    </Badge>
  )
}
