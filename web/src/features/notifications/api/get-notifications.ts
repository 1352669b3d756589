import { queryOptions, useQuery } from '@tanstack/react-query'
import { NOTIFICATIONS_BELL_LIMIT, NOTIFICATIONS_REFETCH_MS } from '@/config/constants'
import { api } from '@/lib/api-client'
import type { Notification } from '@/types/api'
import type { NotificationPage } from '../types'
import { notificationKeys } from './keys'

type Answer = { notifications?: Notification[]; unreadCount?: number; total?: number }

/** The newest `limit` notifications with the unread and total counts. */
export async function getNotifications(limit: number, signal?: AbortSignal): Promise<NotificationPage> {
  const data = await api.get<Answer>('/api/notifications', { signal, params: { limit } })
  const notifications = data?.notifications ?? []
  return {
    notifications,
    unreadCount: Math.max(0, data?.unreadCount ?? unreadCount(notifications)),
    total: data?.total ?? notifications.length,
  }
}

/** Refreshed every 30 seconds (SPEC §9), also while the tab is in the background. */
export function notificationsQueryOptions(limit: number = NOTIFICATIONS_BELL_LIMIT) {
  return queryOptions({
    queryKey: notificationKeys.list(limit),
    queryFn: ({ signal }) => getNotifications(limit, signal),
    refetchInterval: NOTIFICATIONS_REFETCH_MS,
    refetchIntervalInBackground: true,
    staleTime: NOTIFICATIONS_REFETCH_MS / 2,
  })
}

/** The current user's notifications, refreshed every 30 seconds. */
export function useNotifications(limit?: number) {
  return useQuery(notificationsQueryOptions(limit))
}

/** Unread notifications in a list, never below 0. */
export function unreadCount(notifications: Notification[] | undefined): number {
  return Math.max(0, (notifications ?? []).filter((n) => !n.read).length)
}
