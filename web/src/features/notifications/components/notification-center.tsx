import { useState } from 'react'
import { Link } from 'react-router'
import { BellOff, Check, CheckCheck, Inbox, Trash2 } from 'lucide-react'
import { Button, buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { ConfirmDialog } from '@/components/ui/dialog'
import { EmptyState } from '@/components/ui/empty-state'
import { PageHeader } from '@/components/ui/page-header'
import { SegmentedControl } from '@/components/ui/segmented-control'
import { Skeleton } from '@/components/ui/skeleton'
import { NOTIFICATIONS_PAGE_LIMIT } from '@/config/constants'
import { paths } from '@/config/paths'
import { cn } from '@/lib/cn'
import type { Notification } from '@/types/api'
import { formatDateTime, formatNotificationTime } from '@/utils/format'
import { useClearNotifications } from '../api/clear-notifications'
import { useDeleteNotification } from '../api/delete-notification'
import { useNotifications } from '../api/get-notifications'
import { useMarkAllNotificationsRead } from '../api/mark-all-notifications-read'
import { useMarkNotificationRead } from '../api/mark-notification-read'
import { safeActionPath } from '../cache'
import { useOpenNotification } from '../use-open-notification'
import { NotificationIcon } from './notification-icon'

type Filter = 'all' | 'unread'

/** The /notifications screen: every notification, filtered, marked read, deleted or cleared. */
export function NotificationCenter() {
  const query = useNotifications(NOTIFICATIONS_PAGE_LIMIT)
  const markAll = useMarkAllNotificationsRead()
  const clear = useClearNotifications()
  const [filter, setFilter] = useState<Filter>('all')
  const [confirmClear, setConfirmClear] = useState(false)

  const all = query.data?.notifications ?? []
  const unread = query.data?.unreadCount ?? 0
  const total = query.data?.total ?? all.length
  const shown = filter === 'unread' ? all.filter((n) => !n.read) : all

  return (
    <>
      <PageHeader
        title="Notifications"
        description="Build results, project changes and account news, newest first."
        actions={
          <>
            <Button
              variant="secondary"
              icon={<CheckCheck className="size-4" aria-hidden="true" />}
              onClick={() => markAll.mutate()}
              disabled={unread === 0}
            >
              Mark all read
            </Button>
            <Button
              variant="secondary"
              icon={<Trash2 className="size-4" aria-hidden="true" />}
              onClick={() => setConfirmClear(true)}
              disabled={total === 0}
            >
              Clear all
            </Button>
          </>
        }
      />

      <div className="mb-4 flex flex-wrap items-center justify-between gap-3">
        <SegmentedControl
          label="Show"
          value={filter}
          onChange={setFilter}
          options={[
            { value: 'all', label: <>All{query.data ? <> <Count n={total} /></> : null}</> },
            { value: 'unread', label: <>Unread{query.data ? <> <Count n={unread} /></> : null}</> },
          ]}
        />
      </div>

      {query.isPending ? (
        <ListSkeleton />
      ) : query.isError ? (
        <EmptyState
          icon={BellOff}
          title="Notifications could not be loaded"
          description="Check your connection and try again."
          action={
            <Button variant="secondary" onClick={() => void query.refetch()}>
              Try again
            </Button>
          }
        />
      ) : shown.length === 0 ? (
        filter === 'unread' && all.length > 0 ? (
          <EmptyState
            icon={CheckCheck}
            title="You're all caught up"
            description="Every notification has been read."
            action={
              <Button variant="secondary" onClick={() => setFilter('all')}>
                Show all
              </Button>
            }
          />
        ) : (
          <EmptyState
            icon={Inbox}
            title="No notifications yet"
            description="Deployments going live or failing, and changes to your projects and account, will show up here."
            action={
              <Link to={paths.newProject.getHref()} className={buttonClasses({ variant: 'secondary' })}>
                Deploy a project
              </Link>
            }
          />
        )
      ) : (
        <Card className="overflow-hidden">
          <ul aria-label="Notifications" className="divide-y divide-zinc-200 dark:divide-zinc-800">
            {shown.map((n) => (
              <NotificationRow key={n._id} notification={n} />
            ))}
          </ul>
        </Card>
      )}

      <ConfirmDialog
        open={confirmClear}
        title="Clear all notifications?"
        message={`All ${total} notification${total === 1 ? '' : 's'} will be deleted. This cannot be undone.`}
        confirmLabel="Clear all"
        onCancel={() => setConfirmClear(false)}
        onConfirm={() => {
          setConfirmClear(false)
          clear.mutate()
        }}
      />
    </>
  )
}

function Count({ n }: { n: number }) {
  return (
    <span className="rounded-full bg-zinc-200/80 px-1.5 py-px text-xs tabular-nums text-zinc-700 dark:bg-zinc-700/60 dark:text-zinc-200">
      {n}
    </span>
  )
}

function NotificationRow({ notification: n }: { notification: Notification }) {
  const open = useOpenNotification()
  const markRead = useMarkNotificationRead()
  const remove = useDeleteNotification()
  const linked = safeActionPath(n.actionUrl) !== null
  return (
    <li
      className={cn('relative flex items-start gap-3 px-4 py-4 sm:px-5', !n.read && 'bg-indigo-50/40 dark:bg-indigo-500/5')}
      data-read={n.read}
    >
      {n.read ? null : (
        <span className="absolute left-1.5 top-6 size-1.5 rounded-full bg-indigo-500 sm:left-2" aria-hidden="true" />
      )}
      <NotificationIcon type={n.type} className="mt-0.5" />
      <div className="min-w-0 flex-1">
        <button
          type="button"
          onClick={() => open(n)}
          className="group/open block w-full rounded text-left"
          title={linked ? 'Open' : undefined}
        >
          <span className="flex flex-wrap items-baseline gap-x-2">
            <span
              className={cn(
                'text-sm text-zinc-900 group-hover/open:underline dark:text-zinc-50',
                n.read ? 'font-medium' : 'font-semibold',
              )}
            >
              {n.title}
            </span>
            {n.read ? null : <span className="sr-only">Unread</span>}
            <time
              dateTime={n.createdAt}
              title={formatDateTime(n.createdAt)}
              className="text-xs text-zinc-500 dark:text-zinc-400"
            >
              {formatNotificationTime(n.createdAt)}
            </time>
          </span>
          <span className="mt-1 block break-words text-sm text-zinc-600 dark:text-zinc-400">{n.message}</span>
        </button>
      </div>
      <div className="flex shrink-0 items-center gap-1">
        {n.read ? null : (
          <button
            type="button"
            onClick={() => markRead.mutate(n._id)}
            aria-label={`Mark "${n.title}" as read`}
            title="Mark as read"
            className="inline-flex size-8 items-center justify-center rounded-lg text-zinc-500 hover:bg-zinc-100 hover:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-50"
          >
            <Check className="size-4" aria-hidden="true" />
          </button>
        )}
        <button
          type="button"
          onClick={() => remove.mutate(n._id)}
          aria-label={`Delete "${n.title}"`}
          title="Delete"
          className="inline-flex size-8 items-center justify-center rounded-lg text-zinc-500 hover:bg-red-50 hover:text-red-600 dark:text-zinc-400 dark:hover:bg-red-500/10 dark:hover:text-red-400"
        >
          <Trash2 className="size-4" aria-hidden="true" />
        </button>
      </div>
    </li>
  )
}

function ListSkeleton() {
  return (
    <Card className="overflow-hidden" aria-busy="true" aria-label="Loading notifications">
      <ul className="divide-y divide-zinc-200 dark:divide-zinc-800">
        {[0, 1, 2, 3].map((i) => (
          <li key={i} className="flex gap-3 px-5 py-4">
            <Skeleton className="size-8 rounded-lg" />
            <div className="flex-1 space-y-2">
              <Skeleton className="h-4 w-1/3" />
              <Skeleton className="h-3.5 w-3/4" />
            </div>
          </li>
        ))}
      </ul>
    </Card>
  )
}
