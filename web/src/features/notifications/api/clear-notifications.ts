import { api } from '@/lib/api-client'
import { clearPage } from '../cache'
import { useOptimisticNotifications } from './optimistic'

export function clearNotifications() {
  return api.delete<{ deleted: number; unreadCount: number }>('/api/notifications')
}

/** Deletes every notification of the user. */
export function useClearNotifications() {
  return useOptimisticNotifications(
    (_: void) => clearNotifications(),
    () => clearPage(),
    'Failed to clear notifications',
  )
}
