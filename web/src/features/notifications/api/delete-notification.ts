import { api } from '@/lib/api-client'
import { removeFromPage } from '../cache'
import { useOptimisticNotifications } from './optimistic'

export function deleteNotification(id: string) {
  return api.delete<{ deleted: string; unreadCount: number }>(`/api/notifications/${encodeURIComponent(id)}`)
}

/** Deletes one notification. */
export function useDeleteNotification() {
  return useOptimisticNotifications(deleteNotification, removeFromPage, 'Failed to delete notification')
}
