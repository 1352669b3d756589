import { queryOptions, useQuery } from '@tanstack/react-query'
import { NOTIFICATIONS_REFETCH_MS } from '@/config/constants'
import { api } from '@/lib/api-client'
import type { Notification } from '@/types/api'
import { notificationKeys } from './keys'

export async function getNotifications(signal?: AbortSignal): Promise<Notification[]> {
  const data = await api.get<{ notifications?: Notification[] }>('/api/notifications', { signal })
  return data?.notifications ?? []
}

export function notificationsQueryOptions() {
  return queryOptions({
    queryKey: notificationKeys.list(),
    queryFn: ({ signal }) => getNotifications(signal),
    refetchInterval: NOTIFICATIONS_REFETCH_MS,
    staleTime: NOTIFICATIONS_REFETCH_MS / 2,
  })
}

/** The current user's notifications, refreshed every 30 seconds. */
export function useNotifications() {
  return useQuery(notificationsQueryOptions())
}

export function unreadCount(notifications: Notification[] | undefined): number {
  return Math.max(0, (notifications ?? []).filter((n) => !n.read).length)
}
