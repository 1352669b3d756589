import { render, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { createMemoryRouter, Outlet, RouterProvider } from 'react-router'
import { describe, expect, it, vi } from 'vitest'
import { NOTIFICATIONS_REFETCH_MS } from '@/config/constants'
import type { Notification } from '@/types/api'
import { fail, mockApi, ok } from '@/test/utils'
import { notificationsQueryOptions } from '../api/get-notifications'
import { NotificationBell } from './notification-bell'

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString()

function note(id: string, overrides: Partial<Notification> = {}): Notification {
  return { _id: id, type: 'info', title: `Note ${id}`, message: 'Hello', read: false, createdAt: minutesAgo(5), ...overrides }
}

function renderBell() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } })
  const router = createMemoryRouter(
    [
      {
        element: (
          <>
            <NotificationBell />
            <Outlet />
          </>
        ),
        children: [
          { path: '/', element: <p>Home</p> },
          { path: '/deployments/:id', element: <p>Deployment page</p> },
          { path: '/notifications', element: <p>All notifications</p> },
        ],
      },
    ],
    { initialEntries: ['/'] },
  )
  render(
    <QueryClientProvider client={client}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  )
  return { router, client }
}

/** A fake notifications API that keeps its state across calls. */
function fakeServer(initial: Notification[]) {
  let list = [...initial]
  const page = () => ({ notifications: list, unreadCount: list.filter((n) => !n.read).length, total: list.length })
  const api = mockApi({
    'GET /api/notifications': () => ok(page()),
    'PATCH /api/notifications/read-all': () => {
      list = list.map((n) => ({ ...n, read: true }))
      return ok({ updated: 1, unreadCount: 0 })
    },
    ...Object.fromEntries(
      initial.map((n) => [
        `PATCH /api/notifications/${n._id}/read`,
        () => {
          list = list.map((x) => (x._id === n._id ? { ...x, read: true } : x))
          return ok({ notification: { ...n, read: true }, unreadCount: page().unreadCount })
        },
      ]),
    ),
  })
  return api
}

describe('notification bell', () => {
  it.each([
    [1, '1'],
    [99, '99'],
    [100, '99+'],
    [250, '99+'],
  ])('%i unread shows %s', async (count, text) => {
    // The server counts every unread one, also beyond the newest 50 it sends.
    mockApi({ 'GET /api/notifications': ok({ notifications: [note('a')], unreadCount: count, total: count }) })
    renderBell()
    expect(await screen.findByTestId('notification-badge')).toHaveTextContent(new RegExp(`^${text.replace('+', '\\+')}$`))
    expect(screen.getByRole('button', { name: `Notifications, ${text} unread` })).toBeInTheDocument()
  })

  it('asks for the newest 50 and polls every 30 seconds', async () => {
    const { calls } = mockApi({ 'GET /api/notifications': ok({ notifications: [], unreadCount: 0, total: 0 }) })
    renderBell()
    await waitFor(() => expect(calls).toHaveLength(1))
    expect(vi.mocked(fetch).mock.calls[0][0]).toBe('/api/notifications?limit=50')
    const options = notificationsQueryOptions()
    expect(options.refetchInterval).toBe(NOTIFICATIONS_REFETCH_MS)
    expect(NOTIFICATIONS_REFETCH_MS).toBe(30_000)
  })

  it('shows no badge when everything is read', async () => {
    const { calls } = mockApi({
      'GET /api/notifications': ok({ notifications: [note('a', { read: true })], unreadCount: 0, total: 1 }),
    })
    renderBell()
    await waitFor(() => expect(calls).toHaveLength(1))
    expect(screen.queryByTestId('notification-badge')).not.toBeInTheDocument()
    expect(screen.getByRole('button', { name: 'Notifications' })).toBeInTheDocument()
  })

  it('only logs a failure and hides the badge', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    mockApi({ 'GET /api/notifications': fail(500, 'Internal error.') })
    renderBell()
    await waitFor(() => expect(warn).toHaveBeenCalled())
    expect(screen.queryByTestId('notification-badge')).not.toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Notifications' }))
    expect(screen.getByRole('dialog', { name: 'Notifications' })).toHaveTextContent('Notifications could not be loaded')
  })

  it('lists the newest with type icons and relative times', async () => {
    fakeServer([
      note('e', { type: 'error', title: 'Deployment failed', createdAt: minutesAgo(0.2) }),
      note('s', { type: 'success', title: 'Deployment live', createdAt: minutesAgo(5), read: true }),
      note('w', { type: 'warning', title: 'GitHub access revoked', createdAt: minutesAgo(3 * 60) }),
      note('p', { type: 'project', title: 'Project created', createdAt: minutesAgo(2 * 24 * 60) }),
      note('x', { type: 'mystery', title: 'Something else', createdAt: '2025-12-25T10:00:00Z' }),
    ])
    renderBell()
    await userEvent.click(await screen.findByRole('button', { name: 'Notifications, 4 unread' }))
    const panel = screen.getByRole('dialog', { name: 'Notifications' })
    const items = within(panel).getAllByRole('listitem')
    expect(items).toHaveLength(5)
    expect(within(items[0]).getByRole('img', { name: 'Error notification' })).toBeInTheDocument()
    expect(items[0]).toHaveTextContent('Deployment failed')
    expect(items[0]).toHaveTextContent('Just now')
    expect(within(items[0]).getByRole('img', { name: 'Unread' })).toBeInTheDocument()
    expect(within(items[1]).getByRole('img', { name: 'Success notification' })).toBeInTheDocument()
    expect(items[1]).toHaveTextContent('5m ago')
    expect(within(items[1]).queryByRole('img', { name: 'Unread' })).not.toBeInTheDocument()
    expect(items[2]).toHaveTextContent('3h ago')
    expect(within(items[2]).getByRole('img', { name: 'Warning notification' })).toBeInTheDocument()
    expect(items[3]).toHaveTextContent('2d ago')
    expect(within(items[4]).getByRole('img', { name: 'Notification' })).toBeInTheDocument() // the default bell
    expect(items[4]).toHaveTextContent('Dec 25, 2025')
    expect(within(panel).getByRole('link', { name: 'View all notifications' })).toHaveAttribute('href', '/notifications')
  })

  it('a click marks it read and follows its actionUrl', async () => {
    const { calls } = fakeServer([
      note('d1', { type: 'error', title: 'Deployment failed', actionUrl: '/deployments/dep-42' }),
      note('d2', { title: 'Other' }),
    ])
    const { router } = renderBell()
    await userEvent.click(await screen.findByRole('button', { name: 'Notifications, 2 unread' }))
    await userEvent.click(screen.getByRole('button', { name: /Deployment failed/ }))
    expect(router.state.location.pathname).toBe('/deployments/dep-42')
    expect(await screen.findByText('Deployment page')).toBeInTheDocument()
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument()
    expect(calls.some((c) => c.method === 'PATCH' && c.path === '/api/notifications/d1/read')).toBe(true)
    expect(await screen.findByTestId('notification-badge')).toHaveTextContent(/^1$/)
  })

  it('never follows an actionUrl that leaves the app', async () => {
    fakeServer([note('n', { title: 'Phishing', actionUrl: '//evil.example/x' })])
    const { router } = renderBell()
    await userEvent.click(await screen.findByRole('button', { name: 'Notifications, 1 unread' }))
    await userEvent.click(screen.getByRole('button', { name: /Phishing/ }))
    expect(router.state.location.pathname).toBe('/')
  })

  it('Mark all read clears the badge', async () => {
    const { calls } = fakeServer([note('a'), note('b'), note('c', { read: true })])
    renderBell()
    await userEvent.click(await screen.findByRole('button', { name: 'Notifications, 2 unread' }))
    await userEvent.click(screen.getByRole('button', { name: 'Mark all read' }))
    await waitFor(() => expect(screen.queryByTestId('notification-badge')).not.toBeInTheDocument())
    expect(calls.filter((c) => c.method === 'PATCH').map((c) => c.path)).toEqual(['/api/notifications/read-all'])
    expect(screen.getByRole('button', { name: 'Mark all read' })).toBeDisabled()
  })

  it('Escape closes the panel and gives the focus back', async () => {
    fakeServer([])
    renderBell()
    const bell = await screen.findByRole('button', { name: 'Notifications' })
    await userEvent.click(bell)
    expect(screen.getByRole('dialog', { name: 'Notifications' })).toHaveTextContent('No notifications yet')
    await userEvent.keyboard('{Escape}')
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument()
    expect(bell).toHaveFocus()
    expect(bell).toHaveAttribute('aria-expanded', 'false')
  })
})
