import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { useQueryClient } from '@tanstack/react-query'
import { Eraser, RefreshCw, ScrollText } from 'lucide-react'
import { Button } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { Select } from '@/components/ui/select'
import { Switch } from '@/components/ui/switch'
import { cn } from '@/lib/cn'
import { useClearLogs } from '../api/clear-logs'
import { useLogs } from '../api/get-logs'
import { logKeys } from '../api/keys'
import { filterLogs, maxSeq, mergeLogs, type LevelFilter, type TypeFilter } from '../merge'
import type { LogEntry } from '../types'
import { useLogStream } from '../use-log-stream'
import { LogLine } from './log-line'

const TYPE_OPTIONS = [
  { value: 'all', label: 'All' },
  { value: 'deployment', label: 'Deployment' },
  { value: 'runtime', label: 'Runtime' },
] as const

const LEVEL_OPTIONS = [
  { value: 'all', label: 'All' },
  { value: 'info', label: 'Info' },
  { value: 'warning', label: 'Warning' },
  { value: 'error', label: 'Error' },
  { value: 'success', label: 'Success' },
] as const

type LogsPanelProps = {
  deploymentId: string
  /** Live stream starts on while the deployment is still on its way. */
  liveByDefault?: boolean
  /** Seqs of the lines to mark ("Why it failed"). */
  highlight?: readonly number[]
  className?: string
}

/**
 * The Logs panel (SPEC §2): type and level filters, auto-scroll and Live
 * stream toggles, refresh and clear, "x of y log entries", a fixed height.
 */
export function LogsPanel({ deploymentId, liveByDefault = false, highlight, className }: LogsPanelProps) {
  const queryClient = useQueryClient()
  const logs = useLogs(deploymentId)
  const [streamed, setStreamed] = useState<LogEntry[]>([])
  const [type, setType] = useState<TypeFilter>('all')
  const [level, setLevel] = useState<LevelFilter>('all')
  const [autoScroll, setAutoScroll] = useState(true)
  const [live, setLive] = useState(liveByDefault)
  const viewport = useRef<HTMLDivElement>(null)

  const entries = useMemo(() => mergeLogs(logs.data?.logs ?? [], streamed), [logs.data, streamed])
  const shown = useMemo(() => filterLogs(entries, type, level), [entries, type, level])

  const entriesRef = useRef(entries)
  useEffect(() => {
    entriesRef.current = entries
  }, [entries])
  const onEntry = useCallback((entry: LogEntry) => {
    setStreamed((list) => (list.some((e) => e.seq === entry.seq) ? list : mergeLogs(list, [entry])))
  }, [])
  useLogStream({
    deploymentId,
    // Connect once the stored entries are in, so Last-Event-ID continues them.
    enabled: live && !logs.isPending,
    lastSeq: () => maxSeq(entriesRef.current),
    onEntry,
    onStop: () => setLive(false),
  })

  const clear = useClearLogs(deploymentId, { onSuccess: () => setStreamed([]) })

  useEffect(() => {
    const el = viewport.current
    if (autoScroll && el) el.scrollTop = el.scrollHeight
  }, [shown, autoScroll])

  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: logKeys.list(deploymentId) })
  }

  return (
    <Card className={cn('overflow-hidden', className)}>
      <div className="flex flex-col gap-3 border-b border-zinc-200 px-4 py-3 sm:px-5 dark:border-zinc-800">
        <div className="flex flex-wrap items-center justify-between gap-2">
          <h2 className="flex items-center gap-2 text-base font-semibold text-zinc-900 dark:text-zinc-50">
            <ScrollText className="size-4 text-zinc-500" aria-hidden="true" />
            Deployment Logs
            {live ? (
              <span className="inline-flex items-center gap-1.5 rounded-full bg-emerald-50 px-2 py-0.5 text-xs font-medium text-emerald-700 ring-1 ring-emerald-600/20 ring-inset dark:bg-emerald-500/15 dark:text-emerald-300 dark:ring-emerald-400/30">
                <span className="size-1.5 rounded-full bg-emerald-500 motion-safe:animate-pulse" aria-hidden="true" />
                Live
              </span>
            ) : null}
          </h2>
          <div className="flex items-center gap-1">
            <Button
              variant="ghost"
              size="sm"
              onClick={refresh}
              disabled={logs.isFetching}
              aria-label="Refresh logs"
              title="Refresh logs"
              icon={<RefreshCw className={cn('size-4', logs.isFetching && 'motion-safe:animate-spin')} aria-hidden="true" />}
            >
              <span className="hidden sm:inline">Refresh</span>
            </Button>
            <Button
              variant="ghost"
              size="sm"
              onClick={() => clear.mutate()}
              loading={clear.isPending}
              aria-label="Clear logs"
              title="Clear logs"
              icon={<Eraser className="size-4" aria-hidden="true" />}
            >
              <span className="hidden sm:inline">Clear</span>
            </Button>
          </div>
        </div>
        <div className="flex flex-wrap items-center gap-x-5 gap-y-2">
          <Select
            inline
            label="Type"
            value={type}
            onChange={(e) => setType(e.target.value as TypeFilter)}
            options={TYPE_OPTIONS}
          />
          <Select
            inline
            label="Level"
            value={level}
            onChange={(e) => setLevel(e.target.value as LevelFilter)}
            options={LEVEL_OPTIONS}
          />
          <div className="flex flex-wrap items-center gap-x-5 gap-y-2">
            <Switch label="Auto-scroll" checked={autoScroll} onChange={setAutoScroll} />
            <Switch label="Live stream" checked={live} onChange={setLive} />
          </div>
        </div>
      </div>

      <div
        ref={viewport}
        role="log"
        aria-live="off"
        aria-label="Log entries"
        tabIndex={0}
        className="h-96 overflow-y-auto bg-zinc-900 py-2 font-mono text-xs leading-5 text-zinc-200 focus-visible:outline-offset-[-2px] dark:bg-black"
      >
        {logs.isPending ? (
          <p className="px-4 py-2 text-zinc-400">Loading logs...</p>
        ) : shown.length === 0 ? (
          <div className="flex h-full flex-col items-center justify-center gap-2 text-zinc-400">
            <ScrollText className="size-6 text-zinc-600" aria-hidden="true" />
            <p>No logs available</p>
          </div>
        ) : (
          shown.map((entry) => (
            <LogLine key={entry.seq} entry={entry} highlighted={highlight?.includes(entry.seq) ?? false} />
          ))
        )}
      </div>

      <div className="flex items-center justify-between gap-3 border-t border-zinc-200 px-4 py-2 text-xs text-zinc-600 sm:px-5 dark:border-zinc-800 dark:text-zinc-400">
        <p aria-live="polite">
          {shown.length} of {entries.length} log entries
        </p>
        {live ? <p className="hidden sm:block">Streaming new entries as they happen</p> : null}
      </div>
    </Card>
  )
}
