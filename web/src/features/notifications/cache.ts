// Changes of a cached page of notifications, applied at once by the
// mutations (optimistic updates) and confirmed by the refetch after them.
// The unread counter never goes below 0 (SPEC §4).
import type { NotificationPage } from './types'

const atLeastZero = (n: number) => Math.max(0, n)

export function markReadInPage(page: NotificationPage, id: string): NotificationPage {
  const target = page.notifications.find((n) => n._id === id)
  if (!target || target.read) return page
  return {
    ...page,
    notifications: page.notifications.map((n) => (n._id === id ? { ...n, read: true } : n)),
    unreadCount: atLeastZero(page.unreadCount - 1),
  }
}

export function markAllReadInPage(page: NotificationPage): NotificationPage {
  return { ...page, notifications: page.notifications.map((n) => ({ ...n, read: true })), unreadCount: 0 }
}

export function removeFromPage(page: NotificationPage, id: string): NotificationPage {
  const target = page.notifications.find((n) => n._id === id)
  if (!target) return page
  return {
    notifications: page.notifications.filter((n) => n._id !== id),
    unreadCount: target.read ? page.unreadCount : atLeastZero(page.unreadCount - 1),
    total: atLeastZero(page.total - 1),
  }
}

export function clearPage(): NotificationPage {
  return { notifications: [], unreadCount: 0, total: 0 }
}

/**
 * Only app paths are followed: a notification's actionUrl must start with a
 * single "/" (no scheme, no protocol-relative "//host").
 */
export function safeActionPath(actionUrl: string | undefined | null): string | null {
  if (!actionUrl || !actionUrl.startsWith('/') || actionUrl.startsWith('//') || actionUrl.startsWith('/\\')) return null
  return actionUrl
}
