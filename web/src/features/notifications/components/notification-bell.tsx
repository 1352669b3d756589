import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react'
import { Link, useLocation } from 'react-router'
import { Bell, BellOff, CheckCheck } from 'lucide-react'
import { Skeleton } from '@/components/ui/skeleton'
import { NOTIFICATIONS_DROPDOWN_SHOWN } from '@/config/constants'
import { paths } from '@/config/paths'
import { cn } from '@/lib/cn'
import type { Notification } from '@/types/api'
import { formatBadgeCount, formatDateTime, formatNotificationTime } from '@/utils/format'
import { useNotifications } from '../api/get-notifications'
import { useMarkAllNotificationsRead } from '../api/mark-all-notifications-read'
import { useOpenNotification } from '../use-open-notification'
import { NotificationIcon } from './notification-icon'

/**
 * The top bar's bell: its badge shows the unread count ("99+" above 99),
 * refreshed every 30 seconds; it opens the newest notifications.
 */
export function NotificationBell() {
  const notifications = useNotifications()
  const [open, setOpen] = useState(false)
  const root = useRef<HTMLDivElement>(null)
  const trigger = useRef<HTMLButtonElement>(null)
  const panelId = useId()
  const location = useLocation()

  // Failures are only logged (SPEC §8); the badge is then hidden.
  useEffect(() => {
    if (notifications.error) console.warn('Could not load notifications:', notifications.error)
  }, [notifications.error])

  // Another screen closes the panel.
  useEffect(() => setOpen(false), [location.pathname])

  useEffect(() => {
    if (!open) return
    const onPointer = (event: PointerEvent) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false)
    }
    document.addEventListener('pointerdown', onPointer)
    return () => document.removeEventListener('pointerdown', onPointer)
  }, [open])

  const count = notifications.isError ? 0 : (notifications.data?.unreadCount ?? 0)
  const label = count > 0 ? `Notifications, ${formatBadgeCount(count)} unread` : 'Notifications'

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === 'Escape' && open) {
      event.preventDefault()
      setOpen(false)
      trigger.current?.focus()
    }
  }

  return (
    <div ref={root} className="sm:relative" onKeyDown={onKeyDown}>
      <button
        ref={trigger}
        type="button"
        onClick={() => setOpen((o) => !o)}
        aria-label={label}
        aria-expanded={open}
        aria-haspopup="dialog"
        aria-controls={open ? panelId : undefined}
        title="Notifications"
        className="relative inline-flex size-9 items-center justify-center rounded-lg text-zinc-600 transition-colors hover:bg-zinc-100 hover:text-zinc-900 aria-expanded:bg-zinc-100 aria-expanded:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-50 dark:aria-expanded:bg-zinc-800 dark:aria-expanded:text-zinc-50"
      >
        <Bell className="size-5" aria-hidden="true" />
        {count > 0 ? (
          <span
            data-testid="notification-badge"
            aria-hidden="true"
            className="absolute -right-0.5 -top-0.5 flex h-4.5 min-w-4.5 items-center justify-center rounded-full bg-red-600 px-1 text-[10px] leading-none font-semibold tabular-nums text-white ring-2 ring-white dark:ring-zinc-950"
          >
            {formatBadgeCount(count)}
          </span>
        ) : null}
      </button>
      {open ? (
        <NotificationPanel
          id={panelId}
          query={notifications}
          unread={count}
          onClose={() => setOpen(false)}
        />
      ) : null}
    </div>
  )
}

type PanelProps = {
  id: string
  query: ReturnType<typeof useNotifications>
  unread: number
  onClose: () => void
}

/** The dropdown: the newest notifications, Mark all read, and a link to them all. */
function NotificationPanel({ id, query, unread, onClose }: PanelProps) {
  const markAll = useMarkAllNotificationsRead()
  const openNotification = useOpenNotification()
  const list = query.data?.notifications.slice(0, NOTIFICATIONS_DROPDOWN_SHOWN) ?? []
  const more = (query.data?.total ?? 0) - list.length

  return (
    <div
      id={id}
      role="dialog"
      aria-label="Notifications"
      className={cn(
        'absolute inset-x-3 top-full z-50 mt-1 overflow-hidden rounded-xl border border-zinc-200 bg-white shadow-lg motion-safe:animate-pop-in',
        'sm:inset-x-auto sm:right-0 sm:mt-2 sm:w-96',
        'dark:border-zinc-800 dark:bg-zinc-900',
      )}
    >
      <div className="flex items-center justify-between gap-3 border-b border-zinc-200 px-4 py-3 dark:border-zinc-800">
        <h2 className="text-sm font-semibold text-zinc-900 dark:text-zinc-50">
          Notifications
          {unread > 0 ? (
            <span className="ml-2 font-normal text-zinc-500 dark:text-zinc-400">{unread} unread</span>
          ) : null}
        </h2>
        <button
          type="button"
          onClick={() => markAll.mutate()}
          disabled={unread === 0}
          className="inline-flex items-center gap-1.5 rounded-md px-2 py-1 text-xs font-medium text-indigo-600 hover:bg-indigo-50 disabled:pointer-events-none disabled:text-zinc-400 dark:text-indigo-300 dark:hover:bg-indigo-500/10 dark:disabled:text-zinc-500"
        >
          <CheckCheck className="size-3.5" aria-hidden="true" />
          Mark all read
        </button>
      </div>

      <div className="max-h-[min(26rem,calc(100dvh-10rem))] overflow-y-auto">
        {query.isPending ? (
          <ul aria-label="Loading notifications" className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {[0, 1, 2].map((i) => (
              <li key={i} className="flex gap-3 px-4 py-3">
                <Skeleton className="size-8 rounded-lg" />
                <div className="flex-1 space-y-2">
                  <Skeleton className="h-3.5 w-2/3" />
                  <Skeleton className="h-3 w-full" />
                </div>
              </li>
            ))}
          </ul>
        ) : query.isError ? (
          <p className="px-4 py-8 text-center text-sm text-zinc-600 dark:text-zinc-400">
            Notifications could not be loaded. They will be tried again shortly.
          </p>
        ) : list.length === 0 ? (
          <div className="flex flex-col items-center px-6 py-10 text-center">
            <span className="flex size-10 items-center justify-center rounded-full bg-zinc-100 text-zinc-500 dark:bg-zinc-800 dark:text-zinc-400">
              <BellOff className="size-5" aria-hidden="true" />
            </span>
            <p className="mt-3 text-sm font-medium text-zinc-900 dark:text-zinc-50">No notifications yet</p>
            <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
              Build results and project changes will show up here.
            </p>
          </div>
        ) : (
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {list.map((n) => (
              <li key={n._id}>
                <DropdownItem
                  notification={n}
                  onOpen={() => {
                    onClose()
                    openNotification(n)
                  }}
                />
              </li>
            ))}
          </ul>
        )}
      </div>

      <div className="border-t border-zinc-200 bg-zinc-50/80 px-4 py-2.5 text-center dark:border-zinc-800 dark:bg-zinc-950/40">
        <Link
          to={paths.notifications.getHref()}
          onClick={onClose}
          className="rounded text-sm font-medium text-indigo-600 hover:underline dark:text-indigo-300"
        >
          View all notifications{more > 0 ? ` (${more} more)` : ''}
        </Link>
      </div>
    </div>
  )
}

function DropdownItem({ notification: n, onOpen }: { notification: Notification; onOpen: () => void }) {
  return (
    <button
      type="button"
      onClick={onOpen}
      className={cn(
        'flex w-full items-start gap-3 px-4 py-3 text-left transition-colors hover:bg-zinc-50 focus-visible:bg-zinc-50 dark:hover:bg-zinc-800/60 dark:focus-visible:bg-zinc-800/60',
        !n.read && 'bg-indigo-50/50 dark:bg-indigo-500/5',
      )}
    >
      <NotificationIcon type={n.type} />
      <span className="min-w-0 flex-1">
        <span className="flex items-baseline justify-between gap-2">
          <span
            className={cn(
              'truncate text-sm text-zinc-900 dark:text-zinc-50',
              n.read ? 'font-normal' : 'font-semibold',
            )}
          >
            {n.title}
          </span>
          <time
            dateTime={n.createdAt}
            title={formatDateTime(n.createdAt)}
            className="shrink-0 text-xs text-zinc-500 dark:text-zinc-400"
          >
            {formatNotificationTime(n.createdAt)}
          </time>
        </span>
        <span className="mt-0.5 line-clamp-2 block text-sm text-zinc-600 dark:text-zinc-400">{n.message}</span>
      </span>
      {n.read ? null : (
        <span className="mt-1.5 size-2 shrink-0 rounded-full bg-indigo-500" aria-label="Unread" role="img" />
      )}
    </button>
  )
}
