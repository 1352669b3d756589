import { Badge, type BadgeTone } from '@/components/ui/badge'

const looks: Record<string, { label: string; tone: BadgeTone; pulse?: boolean }> = {
  deployed: { label: 'Live', tone: 'success' },
  building: { label: 'Building', tone: 'warning', pulse: true },
  failed: { label: 'Failed', tone: 'danger' },
  draft: { label: 'Draft', tone: 'neutral' },
}

/** deployed = Live, building = Building, failed = Failed, draft = Draft; anything else raw and grey. */
export function ProjectStatusBadge({ status }: { status: string }) {
  const look = looks[status]
  if (!look) return <Badge tone="neutral">{status}</Badge>
  return (
    <Badge tone={look.tone} dot pulse={look.pulse}>
      {look.label}
    </Badge>
  )
}
