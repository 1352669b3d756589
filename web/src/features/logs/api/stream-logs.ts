// The live log stream: GET /api/deployments/{id}/logs/stream as Server-Sent
// Events, read with fetch and a stream reader so that the bearer token
// travels in the Authorization header, never in the URL.
import { getToken } from '@/lib/api-client'
import { createSSEParser } from '../sse'
import type { LogEntry } from '../types'

/** The server refused to open the stream (or could not be reached). */
export class StreamStartError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.name = 'StreamStartError'
    this.status = status
  }
}

export type StreamLogsOptions = {
  /**
   * The highest entry number already shown: the server sends every stored
   * entry after it first, so nothing is lost or doubled. 0 sends them all.
   */
  lastSeq: number
  signal: AbortSignal
  onEntry: (entry: LogEntry) => void
  onConnected?: () => void
}

type StreamMessage = { type?: string; data?: LogEntry }

/**
 * streamLogs follows a deployment's log until the stream ends (it resolves)
 * or fails (it rejects; with StreamStartError when it never opened). Abort
 * the signal to leave.
 */
export async function streamLogs(deploymentId: string, options: StreamLogsOptions): Promise<void> {
  const headers: Record<string, string> = {
    Accept: 'text/event-stream',
    'Last-Event-ID': String(Math.max(0, Math.floor(options.lastSeq))),
  }
  const token = getToken()
  if (token) headers.Authorization = `Bearer ${token}`

  let response: Response
  try {
    response = await fetch(`/api/deployments/${encodeURIComponent(deploymentId)}/logs/stream`, {
      headers,
      signal: options.signal,
      cache: 'no-store',
    })
  } catch (err) {
    if (options.signal.aborted) throw err
    throw new StreamStartError(0, 'Could not reach the server')
  }
  if (!response.ok || !response.body) {
    throw new StreamStartError(response.status, `The log stream answered ${response.status}`)
  }

  const parser = createSSEParser((message) => {
    let parsed: StreamMessage
    try {
      parsed = JSON.parse(message.data) as StreamMessage
    } catch {
      return
    }
    if (parsed.type === 'connected') options.onConnected?.()
    else if (parsed.type === 'log' && parsed.data) options.onEntry(parsed.data)
  })

  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      parser.feed(decoder.decode(value, { stream: true }))
    }
    parser.feed(decoder.decode())
  } finally {
    reader.releaseLock()
  }
}
