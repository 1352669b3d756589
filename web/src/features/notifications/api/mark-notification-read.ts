import { api } from '@/lib/api-client'
import type { Notification } from '@/types/api'
import { markReadInPage } from '../cache'
import { useOptimisticNotifications } from './optimistic'

export function markNotificationRead(id: string) {
  return api.patch<{ notification: Notification; unreadCount: number }>(
    `/api/notifications/${encodeURIComponent(id)}/read`,
  )
}

/** Marks one notification read; the badge drops at once. */
export function useMarkNotificationRead() {
  return useOptimisticNotifications(markNotificationRead, markReadInPage, 'Failed to mark notification as read')
}
