import { CircleCheck, CircleStop, CircleX, Clock, LoaderCircle, Moon, type LucideIcon } from 'lucide-react'
import { Badge, type BadgeTone } from '@/components/ui/badge'
import { SLEEPING_HINT } from '@/config/constants'
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

/** A live server app asleep after going unused: still live, woken by its next visit. */
export const sleepingLook: StatusLook = { label: 'Sleeping', tone: 'info', icon: Moon, iconClass: 'text-sky-500' }

function lookOf(status: string, sleeping?: boolean): StatusLook {
  if (sleeping && status === 'live') return sleepingLook
  return (
    deploymentStatusLook[status] ?? {
      label: capitalize(status || 'unknown'),
      tone: 'neutral',
      icon: Clock,
      iconClass: 'text-zinc-400',
    }
  )
}

export function DeploymentStatusBadge({ status, sleeping }: { status: string; sleeping?: boolean }) {
  const look = lookOf(status, sleeping)
  const asleep = look === sleepingLook
  return (
    <Badge
      tone={look.tone}
      dot
      pulse={look.pulse}
      data-status={asleep ? 'sleeping' : status}
      title={asleep ? SLEEPING_HINT : undefined}
    >
      {look.label}
    </Badge>
  )
}

/** The status as an icon in a soft square, labelled for screen readers. */
export function DeploymentStatusIcon({
  status,
  sleeping,
  className,
}: {
  status: string
  sleeping?: boolean
  className?: string
}) {
  const look = lookOf(status, sleeping)
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
