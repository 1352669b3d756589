import type { Notification } from '@/types/api'

/** GET /api/notifications: the newest notifications and the user's counts. */
export type NotificationPage = {
  notifications: Notification[]
  /** All unread notifications, also those beyond the page. */
  unreadCount: number
  total: number
}

/** The notification types of SPEC §3; any other string gets the bell. */
export const NOTIFICATION_TYPES = ['deployment', 'project', 'system', 'success', 'error', 'warning', 'info'] as const
