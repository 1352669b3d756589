import { describe, expect, it } from 'vitest'
import type { Notification } from '@/types/api'
import { clearPage, markAllReadInPage, markReadInPage, removeFromPage, safeActionPath } from './cache'
import type { NotificationPage } from './types'

const n = (id: string, read: boolean): Notification => ({
  _id: id,
  type: 'info',
  title: id,
  message: '',
  read,
  createdAt: '2026-03-01T10:00:00Z',
})

const page = (unreadCount: number): NotificationPage => ({
  notifications: [n('a', false), n('b', true)],
  unreadCount,
  total: 2,
})

describe('notification page changes', () => {
  it('marking read counts down once, and never below 0', () => {
    const once = markReadInPage(page(1), 'a')
    expect(once.unreadCount).toBe(0)
    expect(once.notifications[0].read).toBe(true)
    expect(markReadInPage(once, 'a')).toBe(once)
    expect(markReadInPage(page(1), 'b').unreadCount).toBe(1) // already read
    expect(markReadInPage(page(0), 'a').unreadCount).toBe(0) // a stale count stays at 0
    expect(markReadInPage(page(1), 'missing').unreadCount).toBe(1)
  })

  it('marking all read leaves 0', () => {
    const all = markAllReadInPage(page(7))
    expect(all.unreadCount).toBe(0)
    expect(all.notifications.every((x) => x.read)).toBe(true)
  })

  it('deleting counts down only for an unread one', () => {
    expect(removeFromPage(page(1), 'a')).toEqual({ notifications: [n('b', true)], unreadCount: 0, total: 1 })
    expect(removeFromPage(page(1), 'b')).toEqual({ notifications: [n('a', false)], unreadCount: 1, total: 1 })
    expect(removeFromPage(page(0), 'a').unreadCount).toBe(0)
    expect(clearPage()).toEqual({ notifications: [], unreadCount: 0, total: 0 })
  })

  it.each([
    ['/deployments/d1', '/deployments/d1'],
    ['/projects', '/projects'],
    ['', null],
    [undefined, null],
    ['https://evil.example', null],
    ['//evil.example/x', null],
    ['/\\evil.example', null],
    ['javascript:alert(1)', null],
  ])('actionUrl %s is followed as %s', (url, want) => {
    expect(safeActionPath(url)).toBe(want)
  })
})
