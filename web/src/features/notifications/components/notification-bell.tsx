import { useEffect } from 'react'
import { Link } from 'react-router'
import { Bell } from 'lucide-react'
import { paths } from '@/config/paths'
import { formatBadgeCount } from '@/utils/format'
import { unreadCount, useNotifications } from '../api/get-notifications'

/** The top bar's bell. Its badge shows the unread count, "99+" above 99. */
export function NotificationBell() {
  const notifications = useNotifications()

  // Failures are only logged (SPEC §8); the badge is then hidden.
  useEffect(() => {
    if (notifications.error) console.warn('Could not load notifications:', notifications.error)
  }, [notifications.error])

  const count = notifications.isError ? 0 : unreadCount(notifications.data)
  return <NotificationBellLink count={count} />
}

export function NotificationBellLink({ count }: { count: number }) {
  const label = count > 0 ? `Notifications, ${formatBadgeCount(count)} unread` : 'Notifications'
  return (
    <Link
      to={paths.notifications.getHref()}
      aria-label={label}
      title="Notifications"
      className="relative inline-flex size-9 items-center justify-center rounded-lg text-zinc-600 transition-colors hover:bg-zinc-100 hover:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-50"
    >
      <Bell className="size-5" aria-hidden="true" />
      {count > 0 ? (
        <span
          data-testid="notification-badge"
          aria-hidden="true"
          className="absolute -right-0.5 -top-0.5 flex h-4.5 min-w-4.5 items-center justify-center rounded-full bg-red-600 px-1 text-[10px] leading-none font-semibold text-white ring-2 ring-white dark:ring-zinc-950"
        >
          {formatBadgeCount(count)}
        </span>
      ) : null}
    </Link>
  )
}
