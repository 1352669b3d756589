import { format } from 'date-fns'
import { cn } from '@/lib/cn'
import type { LogEntry } from '../types'

/** Level colours of the terminal, readable on its dark background in both themes. */
export const levelStyles: Record<string, { label: string; className: string }> = {
  info: { label: 'INFO', className: 'text-sky-300' },
  warning: { label: 'WARN', className: 'text-amber-300' },
  error: { label: 'ERROR', className: 'text-red-400' },
  success: { label: 'OK', className: 'text-emerald-400' },
}

export function logTime(timestamp: string): string {
  const date = new Date(timestamp)
  return Number.isNaN(date.getTime()) ? '' : format(date, 'HH:mm:ss')
}

/**
 * One line of a log: time, level and message, in monospace. A highlighted
 * line is one "Why it failed" points at: marked with a bar and a tint.
 */
export function LogLine({
  entry,
  highlighted = false,
}: {
  entry: Pick<LogEntry, 'timestamp' | 'level' | 'message'>
  highlighted?: boolean
}) {
  const level = levelStyles[entry.level] ?? { label: entry.level.toUpperCase(), className: 'text-zinc-400' }
  return (
    <div
      data-highlighted={highlighted || undefined}
      aria-label={highlighted ? `Cause of the failure: ${entry.message}` : undefined}
      className={cn(
        'grid grid-cols-[auto_3.25rem_minmax(0,1fr)] gap-x-3 px-3 py-px hover:bg-white/5 sm:px-4',
        highlighted && 'border-l-2 border-amber-400 bg-amber-400/15 pl-[calc(0.75rem-2px)] sm:pl-[calc(1rem-2px)]',
      )}
    >
      <time dateTime={entry.timestamp} className="text-zinc-500 tabular-nums select-none">
        {logTime(entry.timestamp)}
      </time>
      <span className={cn('font-semibold', level.className)}>{level.label}</span>
      <span
        className={cn(
          'break-words whitespace-pre-wrap',
          entry.level === 'error' ? 'text-red-200' : entry.level === 'warning' ? 'text-amber-100' : 'text-zinc-200',
        )}
      >
        {entry.message}
      </span>
    </div>
  )
}
