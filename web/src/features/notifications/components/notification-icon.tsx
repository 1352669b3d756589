import {
  Bell,
  CircleCheck,
  CircleX,
  FolderGit2,
  Info,
  Megaphone,
  Rocket,
  TriangleAlert,
  type LucideIcon,
} from 'lucide-react'
import { cn } from '@/lib/cn'

type Look = { icon: LucideIcon; label: string; className: string }

/** One icon per SPEC §3 type, in the status colours used everywhere else. */
const LOOKS: Record<string, Look> = {
  deployment: {
    icon: Rocket,
    label: 'Deployment notification',
    className: 'bg-indigo-50 text-indigo-600 dark:bg-indigo-500/15 dark:text-indigo-300',
  },
  project: {
    icon: FolderGit2,
    label: 'Project notification',
    className: 'bg-violet-50 text-violet-600 dark:bg-violet-500/15 dark:text-violet-300',
  },
  system: {
    icon: Megaphone,
    label: 'System notification',
    className: 'bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300',
  },
  success: {
    icon: CircleCheck,
    label: 'Success notification',
    className: 'bg-emerald-50 text-emerald-600 dark:bg-emerald-500/15 dark:text-emerald-300',
  },
  error: {
    icon: CircleX,
    label: 'Error notification',
    className: 'bg-red-50 text-red-600 dark:bg-red-500/15 dark:text-red-300',
  },
  warning: {
    icon: TriangleAlert,
    label: 'Warning notification',
    className: 'bg-amber-50 text-amber-700 dark:bg-amber-500/15 dark:text-amber-300',
  },
  info: {
    icon: Info,
    label: 'Info notification',
    className: 'bg-sky-50 text-sky-600 dark:bg-sky-500/15 dark:text-sky-300',
  },
}

/** Any other type gets the bell (SPEC §3). */
const DEFAULT_LOOK: Look = {
  icon: Bell,
  label: 'Notification',
  className: 'bg-zinc-100 text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300',
}

export function notificationLook(type: string | undefined): Look {
  return (type && Object.hasOwn(LOOKS, type) ? LOOKS[type] : undefined) ?? DEFAULT_LOOK
}

/** The type's icon in a soft square, named for screen readers ("Error notification", or "Notification"). */
export function NotificationIcon({ type, className }: { type: string | undefined; className?: string }) {
  const look = notificationLook(type)
  const Icon = look.icon
  return (
    <span
      role="img"
      aria-label={look.label}
      data-type={type}
      className={cn('flex size-8 shrink-0 items-center justify-center rounded-lg', look.className, className)}
    >
      <Icon className="size-4" aria-hidden="true" />
    </span>
  )
}
