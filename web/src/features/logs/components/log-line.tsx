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

/** One line of a log: time, level and message, in monospace. */
export function LogLine({ entry }: { entry: Pick<LogEntry, 'timestamp' | 'level' | 'message'> }) {
  const level = levelStyles[entry.level] ?? { label: entry.level.toUpperCase(), className: 'text-zinc-400' }
  return (
    <div className="grid grid-cols-[auto_3.25rem_minmax(0,1fr)] gap-x-3 px-3 py-px hover:bg-white/5 sm:px-4">
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
