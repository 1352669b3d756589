import { render, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it, vi } from 'vitest'
import { AppProvider, createQueryClient } from '@/app/provider'
import { makeLog } from '@/test/fixtures'
import { mockApi, ok } from '@/test/utils'
import type { LogEntry } from '../types'
import { LogsPanel } from './logs-panel'

const sample = [
  makeLog(1, { message: 'Cloning repository' }),
  makeLog(2, { type: 'runtime', message: 'Listening on 3000' }),
  makeLog(3, { level: 'error', message: 'Build failed' }),
  makeLog(4, { level: 'success', message: 'Deployment is live' }),
  makeLog(5, { level: 'warning', type: 'runtime', message: 'Slow response' }),
]

function renderPanel(liveByDefault = false) {
  return render(
    <AppProvider queryClient={createQueryClient()}>
      <LogsPanel deploymentId="d1" liveByDefault={liveByDefault} />
    </AppProvider>,
  )
}

const count = () => screen.getByText(/log entries$/)
const lines = () => within(screen.getByRole('log', { name: 'Log entries' }))

describe('logs panel', () => {
  it('filters by type and level and counts "x of y log entries"', async () => {
    const { calls } = mockApi({ 'GET /api/deployments/d1/logs': ok({ logs: sample, total: 5 }) })
    renderPanel()
    expect(await screen.findByText('Cloning repository')).toBeInTheDocument()
    expect(count()).toHaveTextContent('5 of 5 log entries')
    expect(calls[0].path).toBe('/api/deployments/d1/logs')

    await userEvent.selectOptions(screen.getByLabelText('Type'), 'Runtime')
    expect(count()).toHaveTextContent('2 of 5 log entries')
    expect(lines().queryByText('Cloning repository')).not.toBeInTheDocument()
    expect(lines().getByText('Listening on 3000')).toBeInTheDocument()

    await userEvent.selectOptions(screen.getByLabelText('Level'), 'Warning')
    expect(count()).toHaveTextContent('1 of 5 log entries')
    expect(lines().getByText('Slow response')).toBeInTheDocument()

    await userEvent.selectOptions(screen.getByLabelText('Type'), 'Deployment')
    expect(count()).toHaveTextContent('0 of 5 log entries')
    expect(lines().getByText('No logs available')).toBeInTheDocument()

    await userEvent.selectOptions(screen.getByLabelText('Type'), 'All')
    await userEvent.selectOptions(screen.getByLabelText('Level'), 'Success')
    expect(count()).toHaveTextContent('1 of 5 log entries')
    expect(lines().getByText('OK')).toBeInTheDocument()
  })

  it('offers the SPEC filter options', async () => {
    mockApi({ 'GET /api/deployments/d1/logs': ok({ logs: [], total: 0 }) })
    renderPanel()
    expect(await screen.findByText('No logs available')).toBeInTheDocument()
    const options = (label: string) =>
      within(screen.getByLabelText(label))
        .getAllByRole('option')
        .map((o) => o.textContent)
    expect(options('Type')).toEqual(['All', 'Deployment', 'Runtime'])
    expect(options('Level')).toEqual(['All', 'Info', 'Warning', 'Error', 'Success'])
    expect(screen.getByRole('switch', { name: 'Auto-scroll' })).toBeChecked()
    expect(screen.getByRole('switch', { name: 'Live stream' })).not.toBeChecked()
  })

  it('clears the logs', async () => {
    const { calls } = mockApi({
      'GET /api/deployments/d1/logs': ok({ logs: sample, total: 5 }),
      'DELETE /api/deployments/d1/logs': ok({ cleared: true }),
    })
    renderPanel()
    await screen.findByText('Cloning repository')
    await userEvent.click(screen.getByRole('button', { name: 'Clear logs' }))
    expect(await screen.findByText('Logs cleared successfully')).toBeInTheDocument()
    expect(count()).toHaveTextContent('0 of 0 log entries')
    expect(calls.some((c) => c.method === 'DELETE')).toBe(true)
  })

  it('says when clearing or fetching fails', async () => {
    mockApi({})
    renderPanel()
    expect(await screen.findByText('Failed to fetch logs', {}, { timeout: 4000 })).toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Clear logs' }))
    expect(await screen.findByText('Failed to clear logs')).toBeInTheDocument()
  })

  it('streams new entries after the stored ones, without doubles, and turns off when the stream drops', async () => {
    const encoder = new TextEncoder()
    const message = (e: LogEntry) => `id: ${e.seq}\ndata: ${JSON.stringify({ type: 'log', data: e })}\n\n`
    let streamHeaders: Record<string, string> = {}
    let release: () => void = () => {}
    const released = new Promise<void>((r) => (release = r))
    vi.stubGlobal(
      'fetch',
      vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => {
        const url = String(input)
        if (url.startsWith('/api/deployments/d1/logs/stream')) {
          streamHeaders = init.headers as Record<string, string>
          const chunks = [
            'data: {"type":"connected"}\n\n',
            message(makeLog(2, { message: 'second' })),
            ': heartbeat\n\n' + message(makeLog(3, { message: 'third (live)' })).slice(0, 20),
            message(makeLog(3, { message: 'third (live)' })).slice(20),
          ]
          let i = 0
          return new Response(
            new ReadableStream<Uint8Array>({
              async pull(controller) {
                if (i < chunks.length) controller.enqueue(encoder.encode(chunks[i++]))
                else {
                  await released
                  controller.close()
                }
              },
            }),
            { status: 200 },
          )
        }
        return new Response(
          JSON.stringify({ success: true, data: { logs: [makeLog(1), makeLog(2, { message: 'second' })], total: 2 } }),
          { status: 200 },
        )
      }),
    )
    renderPanel(true)
    expect(screen.getByRole('switch', { name: 'Live stream' })).toBeChecked()
    expect(await screen.findByText('third (live)')).toBeInTheDocument()
    expect(streamHeaders['Last-Event-ID']).toBe('2')
    expect(count()).toHaveTextContent('3 of 3 log entries')
    expect(lines().getAllByText('second')).toHaveLength(1)

    release()
    expect(await screen.findByText('Log stream disconnected')).toBeInTheDocument()
    await waitFor(() => expect(screen.getByRole('switch', { name: 'Live stream' })).not.toBeChecked())
    expect(count()).toHaveTextContent('3 of 3 log entries')
  })

  it('says so when the stream cannot start', async () => {
    mockApi({ 'GET /api/deployments/d1/logs': ok({ logs: [], total: 0 }) })
    renderPanel(true)
    expect(await screen.findByText('Failed to start log stream')).toBeInTheDocument()
    await waitFor(() => expect(screen.getByRole('switch', { name: 'Live stream' })).not.toBeChecked())
  })
})
