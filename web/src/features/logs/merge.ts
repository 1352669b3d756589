import type { LogEntry } from './types'

/** At most this many entries stay in a panel. */
export const MAX_PANEL_ENTRIES = 5000

/**
 * mergeLogs joins fetched and streamed entries: one entry per seq, in seq
 * order, the newest MAX_PANEL_ENTRIES kept.
 */
export function mergeLogs(...lists: ReadonlyArray<readonly LogEntry[]>): LogEntry[] {
  const bySeq = new Map<number, LogEntry>()
  for (const list of lists) for (const e of list) bySeq.set(e.seq, e)
  const merged = [...bySeq.values()].sort((a, b) => a.seq - b.seq)
  return merged.length > MAX_PANEL_ENTRIES ? merged.slice(-MAX_PANEL_ENTRIES) : merged
}

/** The highest seq of the entries, 0 when there are none. */
export function maxSeq(entries: readonly LogEntry[]): number {
  let max = 0
  for (const e of entries) if (e.seq > max) max = e.seq
  return max
}

export type LevelFilter = 'all' | 'info' | 'warning' | 'error' | 'success'
export type TypeFilter = 'all' | 'deployment' | 'runtime'

export function filterLogs(entries: readonly LogEntry[], type: TypeFilter, level: LevelFilter): LogEntry[] {
  return entries.filter((e) => (type === 'all' || e.type === type) && (level === 'all' || e.level === level))
}
