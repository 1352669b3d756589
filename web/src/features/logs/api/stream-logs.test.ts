import { describe, expect, it, vi } from 'vitest'
import { makeLog } from '@/test/fixtures'
import type { LogEntry } from '../types'
import { streamLogs, StreamStartError } from './stream-logs'

/** A streamed Response that hands out the chunks one by one. */
function sseResponse(chunks: string[], { fail = false } = {}) {
  const encoder = new TextEncoder()
  let i = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(encoder.encode(chunks[i++]))
      else if (fail) controller.error(new TypeError('network error'))
      else controller.close()
    },
  })
  return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } })
}

const logMessage = (e: LogEntry) => `id: ${e.seq}\ndata: ${JSON.stringify({ type: 'log', data: e })}\n\n`

describe('streamLogs', () => {
  it('sends the token in the header and Last-Event-ID, never in the URL', async () => {
    localStorage.setItem('token', 'secret-token')
    const fetchMock = vi.fn(async () => sseResponse(['data: {"type":"connected"}\n\n']))
    vi.stubGlobal('fetch', fetchMock)
    await streamLogs('d 1', { lastSeq: 41, signal: new AbortController().signal, onEntry: () => {} })
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit]
    expect(url).toBe('/api/deployments/d%201/logs/stream')
    expect(url).not.toContain('secret-token')
    expect(init.headers).toMatchObject({
      Authorization: 'Bearer secret-token',
      'Last-Event-ID': '41',
      Accept: 'text/event-stream',
    })
  })

  it('hands out log entries from chunks split anywhere, skipping heartbeats', async () => {
    const text =
      'data: {"type":"connected"}\n\n' + logMessage(makeLog(1)) + ': heartbeat\n\n' + logMessage(makeLog(2, { level: 'success' }))
    const chunks = text.match(/[\s\S]{1,7}/g) ?? []
    vi.stubGlobal('fetch', vi.fn(async () => sseResponse(chunks)))
    const entries: LogEntry[] = []
    const connected = vi.fn()
    await streamLogs('d1', {
      lastSeq: 0,
      signal: new AbortController().signal,
      onEntry: (e) => entries.push(e),
      onConnected: connected,
    })
    expect(connected).toHaveBeenCalledTimes(1)
    expect(entries).toEqual([makeLog(1), makeLog(2, { level: 'success' })])
  })

  it('rejects with StreamStartError when the server refuses', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('{"success":false}', { status: 404 })))
    await expect(
      streamLogs('d1', { lastSeq: 0, signal: new AbortController().signal, onEntry: () => {} }),
    ).rejects.toBeInstanceOf(StreamStartError)
  })

  it('rejects when the connection drops mid-stream, after the entries it had', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => sseResponse([logMessage(makeLog(1))], { fail: true })))
    const entries: LogEntry[] = []
    await expect(
      streamLogs('d1', { lastSeq: 0, signal: new AbortController().signal, onEntry: (e) => entries.push(e) }),
    ).rejects.toThrow('network error')
    expect(entries).toHaveLength(1)
  })
})
