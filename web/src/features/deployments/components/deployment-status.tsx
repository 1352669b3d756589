import { CircleCheck, CircleStop, CircleX, Clock, LoaderCircle, type LucideIcon } from 'lucide-react'
import { Badge, type BadgeTone } from '@/components/ui/badge'
import { cn } from '@/lib/cn'
import { capitalize } from '@/utils/format'

type StatusLook = { label: string; tone: BadgeTone; icon: LucideIcon; iconClass: string; pulse?: boolean }

/** One look per status, the same everywhere (STYLE.md). */
export const deploymentStatusLook: Record<string, StatusLook> = {
  live: { label: 'Live', tone: 'success', icon: CircleCheck, iconClass: 'text-emerald-500' },
  building: {
    label: 'Building',
    tone: 'warning',
    icon: LoaderCircle,
    iconClass: 'text-amber-500 motion-safe:animate-spin',
    pulse: true,
  },
  deploying: {
    label: 'Deploying',
    tone: 'warning',
    icon: LoaderCircle,
    iconClass: 'text-amber-500 motion-safe:animate-spin',
    pulse: true,
  },
  pending: { label: 'Pending', tone: 'info', icon: Clock, iconClass: 'text-sky-500' },
  failed: { label: 'Failed', tone: 'danger', icon: CircleX, iconClass: 'text-red-500' },
  stopped: { label: 'Stopped', tone: 'neutral', icon: CircleStop, iconClass: 'text-zinc-400' },
}

function lookOf(status: string): StatusLook {
  return (
    deploymentStatusLook[status] ?? {
      label: capitalize(status || 'unknown'),
      tone: 'neutral',
      icon: Clock,
      iconClass: 'text-zinc-400',
    }
  )
}

export function DeploymentStatusBadge({ status }: { status: string }) {
  const look = lookOf(status)
  return (
    <Badge tone={look.tone} dot pulse={look.pulse} data-status={status}>
      {look.label}
    </Badge>
  )
}

/** The status as an icon in a soft square, labelled for screen readers. */
export function DeploymentStatusIcon({ status, className }: { status: string; className?: string }) {
  const look = lookOf(status)
  const Icon = look.icon
  return (
    <span
      role="img"
      aria-label={`Status: ${look.label}`}
      className={cn(
        'flex size-10 shrink-0 items-center justify-center rounded-lg bg-zinc-100 dark:bg-zinc-800',
        className,
      )}
    >
      <Icon className={cn('size-5', look.iconClass)} aria-hidden="true" />
    </span>
  )
}
