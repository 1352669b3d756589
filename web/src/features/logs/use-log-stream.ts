import { useEffect, useRef } from 'react'
import toast from 'react-hot-toast'
import { streamLogs, StreamStartError } from './api/stream-logs'
import type { LogEntry } from './types'

type UseLogStreamOptions = {
  deploymentId: string
  enabled: boolean
  /** The highest seq already shown, read when (re)connecting. */
  lastSeq: () => number
  onEntry: (entry: LogEntry) => void
  /** The stream ended or failed: the caller turns Live stream off. */
  onStop: () => void
}

/**
 * useLogStream follows the log while `enabled`. A stream that cannot open
 * says "Failed to start log stream", one that drops says "Log stream
 * disconnected"; both call onStop.
 */
export function useLogStream({ deploymentId, enabled, lastSeq, onEntry, onStop }: UseLogStreamOptions) {
  const latest = useRef({ lastSeq, onEntry, onStop })
  useEffect(() => {
    latest.current = { lastSeq, onEntry, onStop }
  })

  useEffect(() => {
    if (!enabled || !deploymentId) return
    const controller = new AbortController()
    streamLogs(deploymentId, {
      lastSeq: latest.current.lastSeq(),
      signal: controller.signal,
      onEntry: (entry) => latest.current.onEntry(entry),
    }).then(
      () => {
        if (controller.signal.aborted) return
        toast.error('Log stream disconnected')
        latest.current.onStop()
      },
      (err: unknown) => {
        if (controller.signal.aborted) return
        toast.error(err instanceof StreamStartError ? 'Failed to start log stream' : 'Log stream disconnected')
        latest.current.onStop()
      },
    )
    return () => controller.abort()
  }, [deploymentId, enabled])
}
