import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import type { Notification } from '@/types/api'
import { fail, mockApi, ok, renderApp, testUser } from '@/test/utils'

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString()

const seed = (): Notification[] => [
  {
    _id: 'n1',
    type: 'error',
    title: 'Deployment failed',
    message: 'Recipes failed: Build command exited with code 1',
    read: false,
    actionUrl: '/deployments/d9',
    createdAt: minutesAgo(2),
  },
  {
    _id: 'n2',
    type: 'success',
    title: 'Deployment live',
    message: 'Portfolio is live at http://portfolio.localhost:8080.',
    read: true,
    actionUrl: '/deployments/d8',
    createdAt: minutesAgo(90),
  },
  {
    _id: 'n3',
    type: 'system',
    title: 'Welcome to Gantry',
    message: 'Hi Ada!',
    read: false,
    actionUrl: '/projects/new',
    createdAt: minutesAgo(3 * 24 * 60),
  },
]

/** The notifications API over an in-memory list, as the server answers it. */
function server(initial: Notification[] = seed()) {
  let list = [...initial]
  const page = () => ({ notifications: list, unreadCount: list.filter((n) => !n.read).length, total: list.length })
  const api = mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/notifications': () => ok(page()),
    'PATCH /api/notifications/read-all': () => {
      const updated = page().unreadCount
      list = list.map((n) => ({ ...n, read: true }))
      return ok({ updated, unreadCount: 0 })
    },
    'DELETE /api/notifications': () => {
      const deleted = list.length
      list = []
      return ok({ deleted, unreadCount: 0 })
    },
    ...Object.fromEntries(
      initial.flatMap((n) => [
        [
          `PATCH /api/notifications/${n._id}/read`,
          () => {
            list = list.map((x) => (x._id === n._id ? { ...x, read: true } : x))
            return ok({ notification: { ...n, read: true }, unreadCount: page().unreadCount })
          },
        ],
        [
          `DELETE /api/notifications/${n._id}`,
          () => {
            list = list.filter((x) => x._id !== n._id)
            return ok({ deleted: n._id, unreadCount: page().unreadCount })
          },
        ],
      ]),
    ),
  })
  return api
}

const rows = () => within(screen.getByRole('list', { name: 'Notifications' })).getAllByRole('listitem')

describe('notifications screen', () => {
  it('lists every notification with its icon, time and unread state', async () => {
    const { fetchMock } = server()
    renderApp('/notifications', { user: testUser })
    expect(await screen.findByRole('heading', { level: 1, name: 'Notifications' })).toBeInTheDocument()
    await screen.findByText('Deployment failed')
    expect(fetchMock.mock.calls.map((c) => String(c[0]))).toContain('/api/notifications?limit=200')
    const [failed, live, welcome] = rows()
    expect(within(failed).getByRole('img', { name: 'Error notification' })).toBeInTheDocument()
    expect(failed).toHaveTextContent('Recipes failed: Build command exited with code 1')
    expect(failed).toHaveTextContent('2m ago')
    expect(failed).toHaveTextContent('Unread')
    expect(within(live).getByRole('img', { name: 'Success notification' })).toBeInTheDocument()
    expect(live).toHaveTextContent('1h ago')
    expect(live).not.toHaveTextContent('Unread')
    expect(welcome).toHaveTextContent('3d ago')
    expect(screen.getByRole('button', { name: 'All 3' })).toHaveAttribute('aria-pressed', 'true')
    expect(screen.getByRole('button', { name: 'Unread 2' })).toBeInTheDocument()
  })

  it('filters to unread ones, and says when all are read', async () => {
    server()
    renderApp('/notifications', { user: testUser })
    await screen.findByText('Deployment failed')
    await userEvent.click(screen.getByRole('button', { name: 'Unread 2' }))
    expect(rows()).toHaveLength(2)
    expect(screen.queryByText('Deployment live')).not.toBeInTheDocument()

    await userEvent.click(screen.getByRole('button', { name: 'Mark all read' }))
    expect(await screen.findByText("You're all caught up")).toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Show all' }))
    expect(rows()).toHaveLength(3)
    expect(screen.getByRole('button', { name: 'Mark all read' })).toBeDisabled()
  })

  it('marks one read and deletes one', async () => {
    const { calls } = server()
    renderApp('/notifications', { user: testUser })
    await screen.findByText('Deployment failed')
    await userEvent.click(screen.getByRole('button', { name: 'Mark "Deployment failed" as read' }))
    await waitFor(() => expect(rows()[0]).not.toHaveTextContent('Unread'))
    expect(screen.queryByRole('button', { name: 'Mark "Deployment failed" as read' })).not.toBeInTheDocument()
    await waitFor(() => expect(screen.getByRole('button', { name: 'Unread 1' })).toBeInTheDocument())

    await userEvent.click(screen.getByRole('button', { name: 'Delete "Deployment live"' }))
    await waitFor(() => expect(screen.queryByText('Deployment live')).not.toBeInTheDocument())
    expect(rows()).toHaveLength(2)
    expect(calls.filter((c) => c.method !== 'GET').map((c) => `${c.method} ${c.path}`)).toEqual([
      'PATCH /api/notifications/n1/read',
      'DELETE /api/notifications/n2',
    ])
  })

  it('opening one marks it read and goes to its page', async () => {
    const { calls } = server()
    const { router } = renderApp('/notifications', { user: testUser })
    await screen.findByText('Welcome to Gantry')
    await userEvent.click(screen.getByRole('button', { name: /^Welcome to Gantry/ }))
    await waitFor(() => expect(router.state.location.pathname).toBe('/projects/new'))
    expect(calls.some((c) => c.method === 'PATCH' && c.path === '/api/notifications/n3/read')).toBe(true)
  })

  it('clears all only after confirming', async () => {
    const { calls } = server()
    renderApp('/notifications', { user: testUser })
    await screen.findByText('Deployment failed')
    await userEvent.click(screen.getByRole('button', { name: 'Clear all' }))
    let dialog = screen.getByRole('dialog', { name: 'Clear all notifications?' })
    expect(dialog).toHaveTextContent('All 3 notifications will be deleted. This cannot be undone.')
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }))
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument()
    expect(rows()).toHaveLength(3)
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false)

    await userEvent.click(screen.getByRole('button', { name: 'Clear all' }))
    dialog = screen.getByRole('dialog', { name: 'Clear all notifications?' })
    await userEvent.click(within(dialog).getByRole('button', { name: 'Clear all' }))
    expect(await screen.findByText('No notifications yet')).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Deploy a project' })).toHaveAttribute('href', '/projects/new')
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.path)).toEqual(['/api/notifications'])
    expect(screen.getByRole('button', { name: 'Clear all' })).toBeDisabled()
    expect(screen.queryByTestId('notification-badge')).not.toBeInTheDocument()
  })

  it('shows the empty state', async () => {
    server([])
    renderApp('/notifications', { user: testUser })
    expect(await screen.findByText('No notifications yet')).toBeInTheDocument()
    expect(screen.getByRole('button', { name: 'Mark all read' })).toBeDisabled()
    expect(screen.getByRole('button', { name: 'Clear all' })).toBeDisabled()
  })

  it('puts a refused change back and says so', async () => {
    server()
    mockApi({
      'GET /api/auth/me': ok({ user: testUser }),
      'GET /api/notifications': ok({ notifications: seed(), unreadCount: 2, total: 3 }),
      'DELETE /api/notifications/n1': fail(404, 'Notification not found'),
    })
    renderApp('/notifications', { user: testUser })
    await screen.findByText('Deployment failed')
    await userEvent.click(screen.getByRole('button', { name: 'Delete "Deployment failed"' }))
    expect(await screen.findByText('Notification not found')).toBeInTheDocument()
    expect(screen.getByText('Deployment failed')).toBeInTheDocument()
  })
})
