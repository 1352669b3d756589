import { describe, expect, it } from 'vitest'
import {
  bytesToKB,
  formatBadgeCount,
  formatDate,
  formatDuration,
  formatKB,
  formatNotificationTime,
  formatRelativeTime,
  formatSize,
  initials,
  msToSeconds,
} from './format'

const now = new Date('2026-03-15T12:00:00Z')
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString()
const MIN = 60
const HOUR = 3600
const DAY = 86400

describe('formatNotificationTime', () => {
  it.each([
    [0, 'Just now'],
    [59, 'Just now'],
    [MIN, '1m ago'],
    [59 * MIN + 59, '59m ago'],
    [HOUR, '1h ago'],
    [23 * HOUR + 59 * MIN, '23h ago'],
    [DAY, '1d ago'],
    [6 * DAY + 23 * HOUR, '6d ago'],
  ])('%i seconds ago reads %s', (seconds, want) => {
    expect(formatNotificationTime(ago(seconds), now)).toBe(want)
  })

  it('shows the date from the seventh day on', () => {
    expect(formatNotificationTime(ago(7 * DAY), now)).toBe('Mar 8, 2026')
    expect(formatNotificationTime('2025-12-25T10:00:00Z', now)).toBe('Dec 25, 2025')
  })

  it('treats a future time as just now', () => {
    expect(formatNotificationTime(new Date(now.getTime() + 5000), now)).toBe('Just now')
  })
})

describe('formatRelativeTime (landing and Discover)', () => {
  it.each([
    [30, 'Just now'],
    [59, 'Just now'],
    [60, '1m ago'],
    [45 * MIN, '45m ago'],
    [59 * MIN + 59, '59m ago'],
    [HOUR, '1h ago'],
    [5 * HOUR, '5h ago'],
    [DAY - 1, '23h ago'],
    [DAY, '1d ago'],
    [7 * DAY, '7d ago'],
    [29 * DAY, '29d ago'],
    [30 * DAY - 1, '29d ago'],
    [30 * DAY, '1mo ago'],
    [59 * DAY, '1mo ago'],
    [60 * DAY, '2mo ago'],
    [95 * DAY, '3mo ago'],
    [400 * DAY, '13mo ago'],
  ])('%i seconds ago reads %s', (seconds, want) => {
    expect(formatRelativeTime(ago(seconds), now)).toBe(want)
  })

  it('returns nothing for an invalid date', () => {
    expect(formatRelativeTime('not a date', now)).toBe('')
  })

  it('treats a future time as just now, and accepts dates and timestamps', () => {
    expect(formatRelativeTime(new Date(now.getTime() + 90_000), now)).toBe('Just now')
    expect(formatRelativeTime(new Date(now.getTime() - 2 * DAY * 1000), now)).toBe('2d ago')
    expect(formatRelativeTime(now.getTime() - 3 * HOUR * 1000, now)).toBe('3h ago')
  })
})

describe('units', () => {
  it('shows durations in whole seconds', () => {
    expect(msToSeconds(41_600)).toBe(42)
    expect(msToSeconds(400)).toBe(0)
    expect(formatDuration(12_345)).toBe('12s')
    expect(formatDuration(0)).toBe('0s')
    expect(formatDuration(undefined)).toBe('—')
  })

  it('shows sizes in KB', () => {
    expect(bytesToKB(2048)).toBe(2)
    expect(bytesToKB(1536)).toBe(1.5)
    expect(formatKB(145_920)).toBe('142.5 KB')
    expect(formatKB(1000)).toBe('0.98 KB')
    expect(formatKB(null)).toBe('—')
  })
})

describe('formatSize', () => {
  const GiB = 2 ** 30
  it.each([
    [0, '0 B'],
    [512, '512 B'],
    [1024, '1 KB'],
    [1536, '1.5 KB'],
    [412 * 2 ** 20, '412 MB'],
    [45 * 2 ** 20 + 300 * 1024, '45.3 MB'],
    [GiB, '1 GB'],
    [GiB + GiB / 50, '1.02 GB'],
    [GiB - 1, '1 GB'],
    [25 * GiB, '25 GB'],
  ])('%d bytes → %s (as the server writes it)', (bytes, want) => {
    expect(formatSize(bytes)).toBe(want)
  })
  it('shows a dash for nothing', () => {
    expect(formatSize(undefined)).toBe('—')
  })
})

describe('formatBadgeCount', () => {
  it.each([
    [1, '1'],
    [99, '99'],
    [100, '99+'],
    [2500, '99+'],
  ])('%i reads %s', (count, want) => {
    expect(formatBadgeCount(count)).toBe(want)
  })
})

describe('formatDate', () => {
  it('formats dates and skips missing ones', () => {
    expect(formatDate('2026-01-10T09:00:00Z')).toBe('Jan 10, 2026')
    expect(formatDate(undefined)).toBe('')
    expect(formatDate('')).toBe('')
  })
})

describe('initials', () => {
  it.each([
    ['Ada Lovelace', undefined, 'AL'],
    ['grace brewster murray hopper', undefined, 'GH'],
    ['Linus', undefined, 'LI'],
    ['', 'tux', 'TU'],
    [undefined, undefined, '?'],
  ])('%s / %s → %s', (name, username, want) => {
    expect(initials(name, username)).toBe(want)
  })
})
