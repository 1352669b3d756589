// Display formats of SPEC §9. Every function takes `now` so tests can fix it.
import { format } from 'date-fns'
import { UNREAD_BADGE_MAX } from '@/config/constants'

const MINUTE = 60
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

function toDate(value: string | number | Date): Date {
  return value instanceof Date ? value : new Date(value)
}

function secondsBetween(date: Date, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - date.getTime()) / 1000))
}

/**
 * Relative time in the notifications style: "Just now" under a minute, then
 * "5m ago", "3h ago", "6d ago" up to six days, then the date ("Mar 4, 2026").
 */
export function formatNotificationTime(value: string | number | Date, now: Date = new Date()): string {
  const date = toDate(value)
  if (Number.isNaN(date.getTime())) return ''
  const s = secondsBetween(date, now)
  if (s < MINUTE) return 'Just now'
  if (s < HOUR) return `${Math.floor(s / MINUTE)}m ago`
  if (s < DAY) return `${Math.floor(s / HOUR)}h ago`
  const days = Math.floor(s / DAY)
  if (days <= 6) return `${days}d ago`
  return formatDate(date)
}

/**
 * Relative time in the landing and Discover style: "Just now" under 60
 * seconds, then minutes, hours and days up to 30 days, then months ("2mo ago").
 */
export function formatRelativeTime(value: string | number | Date, now: Date = new Date()): string {
  const date = toDate(value)
  if (Number.isNaN(date.getTime())) return ''
  const s = secondsBetween(date, now)
  if (s < MINUTE) return 'Just now'
  if (s < HOUR) return `${Math.floor(s / MINUTE)}m ago`
  if (s < DAY) return `${Math.floor(s / HOUR)}h ago`
  const days = Math.floor(s / DAY)
  if (days < 30) return `${days}d ago`
  return `${Math.floor(days / 30)}mo ago`
}

/** A calendar date, e.g. "Mar 4, 2026". Empty for a missing or invalid value. */
export function formatDate(value: string | number | Date | null | undefined): string {
  if (value === null || value === undefined || value === '') return ''
  const date = toDate(value)
  return Number.isNaN(date.getTime()) ? '' : format(date, 'MMM d, yyyy')
}

/** A date and time, e.g. "Mar 4, 2026, 14:05". Empty for a missing or invalid value. */
export function formatDateTime(value: string | number | Date | null | undefined): string {
  if (value === null || value === undefined || value === '') return ''
  const date = toDate(value)
  return Number.isNaN(date.getTime()) ? '' : format(date, 'MMM d, yyyy, HH:mm')
}

/** Whole seconds from milliseconds, e.g. 41_600 → 42. */
export function msToSeconds(ms: number): number {
  return Math.round(ms / 1000)
}

/** A duration stored in milliseconds, shown in whole seconds: "42s". */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—'
  return `${msToSeconds(ms)}s`
}

/** Kilobytes from bytes, two decimals: 2048 → 2, 1536 → 1.5. */
export function bytesToKB(bytes: number): number {
  return Math.round((bytes / 1024) * 100) / 100
}

/** A size stored in bytes, shown in KB: "1.5 KB". */
export function formatKB(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—'
  return `${bytesToKB(bytes)} KB`
}

const SIZE_UNITS = ['KB', 'MB', 'GB', 'TB'] as const

/**
 * A size in bytes in binary units labelled B, KB, MB, GB, TB (1 KB = 1024
 * bytes, as the build size in KB), three significant digits, no trailing
 * zeros: "512 B", "1.5 KB", "412 MB", "1.02 GB", "1 GB". The server words
 * its storage messages the same way (gantry.FormatSize).
 */
export function formatSize(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—'
  if (bytes < 1024) return `${Math.max(0, Math.round(bytes))} B`
  let v = bytes / 1024
  let i = 0
  while (v >= 1024 && i < SIZE_UNITS.length - 1) {
    v /= 1024
    i++
  }
  let s = v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)
  if (s === '1024' && i < SIZE_UNITS.length - 1) {
    s = '1'
    i++
  }
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '')
  return `${s} ${SIZE_UNITS[i]}`
}

/** The unread badge text: the count, or "99+" above 99. */
export function formatBadgeCount(count: number): string {
  return count > UNREAD_BADGE_MAX ? `${UNREAD_BADGE_MAX}+` : String(count)
}

/** Up to two initials from a full name, falling back to the username. */
export function initials(fullName: string | undefined, username?: string): string {
  const words = (fullName ?? '').trim().split(/\s+/).filter(Boolean)
  if (words.length >= 2) return (words[0][0] + words[words.length - 1][0]).toUpperCase()
  if (words.length === 1) return words[0].slice(0, 2).toUpperCase()
  return (username ?? '?').slice(0, 2).toUpperCase()
}

/** Capitalises the first letter: "student" → "Student". */
export function capitalize(value: string): string {
  return value ? value[0].toUpperCase() + value.slice(1) : value
}
