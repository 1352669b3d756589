import { useCallback } from 'react'
import { useNavigate } from 'react-router'
import type { Notification } from '@/types/api'
import { useMarkNotificationRead } from './api/mark-notification-read'
import { safeActionPath } from './cache'

/**
 * Opening a notification marks it read (when it is unread) and goes to its
 * actionUrl, when that is a path of the app.
 */
export function useOpenNotification() {
  const navigate = useNavigate()
  const markRead = useMarkNotificationRead()
  const { mutate } = markRead
  return useCallback(
    (n: Notification) => {
      if (!n.read) mutate(n._id)
      const path = safeActionPath(n.actionUrl)
      if (path) navigate(path)
    },
    [mutate, navigate],
  )
}
