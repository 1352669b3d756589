import { api } from '@/lib/api-client'
import { markAllReadInPage } from '../cache'
import { useOptimisticNotifications } from './optimistic'

export function markAllNotificationsRead() {
  return api.patch<{ updated: number; unreadCount: number }>('/api/notifications/read-all')
}

/** Marks every notification read; the badge clears at once. */
export function useMarkAllNotificationsRead() {
  return useOptimisticNotifications(
    (_: void) => markAllNotificationsRead(),
    (page) => markAllReadInPage(page),
    'Failed to mark notifications as read',
  )
}
