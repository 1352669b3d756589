import { render, screen, waitFor } from '@testing-library/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { MemoryRouter } from 'react-router'
import { describe, expect, it, vi } from 'vitest'
import type { Notification } from '@/types/api'
import { fail, mockApi, ok } from '@/test/utils'
import { NotificationBell } from './notification-bell'

function notifications(unread: number, read = 2): Notification[] {
  return Array.from({ length: unread + read }, (_, i) => ({
    _id: `n${i}`,
    type: 'info',
    title: `Note ${i}`,
    message: 'Hello',
    read: i >= unread,
    createdAt: '2026-03-01T10:00:00Z',
  }))
}

function renderBell() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } })
  return render(
    <QueryClientProvider client={client}>
      <MemoryRouter>
        <NotificationBell />
      </MemoryRouter>
    </QueryClientProvider>,
  )
}

describe('notification bell', () => {
  it.each([
    [1, '1'],
    [99, '99'],
    [100, '99+'],
    [250, '99+'],
  ])('%i unread shows %s', async (count, text) => {
    mockApi({ 'GET /api/notifications': ok({ notifications: notifications(count) }) })
    renderBell()
    expect(await screen.findByTestId('notification-badge')).toHaveTextContent(new RegExp(`^${text.replace('+', '\\+')}$`))
    expect(screen.getByRole('link', { name: `Notifications, ${text} unread` })).toHaveAttribute(
      'href',
      '/notifications',
    )
  })

  it('shows no badge when everything is read', async () => {
    const { calls } = mockApi({ 'GET /api/notifications': ok({ notifications: notifications(0) }) })
    renderBell()
    await waitFor(() => expect(calls).toHaveLength(1))
    expect(screen.queryByTestId('notification-badge')).not.toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Notifications' })).toBeInTheDocument()
  })

  it('only logs a failure and hides the badge', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    mockApi({ 'GET /api/notifications': fail(404, 'Not found') })
    renderBell()
    await waitFor(() => expect(warn).toHaveBeenCalled())
    expect(screen.queryByTestId('notification-badge')).not.toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Notifications' })).toBeInTheDocument()
  })
})
