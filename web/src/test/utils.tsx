// Helpers for route-level tests: a fake API and the real providers and routes.
import { render } from '@testing-library/react'
import { createMemoryRouter, RouterProvider } from 'react-router'
import { vi } from 'vitest'
import { AppProvider, createQueryClient } from '@/app/provider'
import { routes } from '@/app/router'
import type { User } from '@/types/api'

/** An answer of the fake API; `networkError` makes fetch fail as when the server cannot be reached. */
export type FakeResponse = { status?: number; body?: unknown; delay?: number; networkError?: boolean }
export type FakeHandler = FakeResponse | ((request: { url: URL; body: unknown }) => FakeResponse)

/**
 * mockApi replaces fetch with a table of answers keyed by "METHOD /path".
 * Anything not in the table answers 404 with the API's error envelope.
 */
export function mockApi(handlers: Record<string, FakeHandler>) {
  const calls: Array<{
    method: string
    path: string
    search: string
    body: unknown
    headers: Record<string, string>
  }> = []
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = new URL(String(input), 'http://localhost')
    const method = (init.method ?? 'GET').toUpperCase()
    const body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined
    calls.push({
      method,
      path: url.pathname,
      search: url.search,
      body,
      headers: (init.headers ?? {}) as Record<string, string>,
    })
    const handler = handlers[`${method} ${url.pathname}`]
    const answer: FakeResponse =
      handler === undefined
        ? { status: 404, body: { success: false, message: 'Not found' } }
        : typeof handler === 'function'
          ? handler({ url, body })
          : handler
    if (answer.delay) await new Promise((r) => setTimeout(r, answer.delay))
    if (answer.networkError) throw new TypeError('Failed to fetch')
    return new Response(answer.body === undefined ? '' : JSON.stringify(answer.body), {
      status: answer.status ?? 200,
      headers: { 'Content-Type': 'application/json' },
    })
  })
  vi.stubGlobal('fetch', fetchMock)
  return { fetchMock, calls }
}

export const ok = (data: unknown): FakeResponse => ({ status: 200, body: { success: true, data } })
export const fail = (status: number, message?: string): FakeResponse => ({
  status,
  body: message === undefined ? { success: false } : { success: false, message },
})
export const unreachable: FakeResponse = { networkError: true }

export const testUser: User = {
  _id: 'u_01',
  fullName: 'Ada Lovelace',
  username: 'ada',
  email: 'ada@example.com',
  role: 'student',
  subscription: { plan: 'free', maxProjects: 3, maxDeployments: 5 },
  isVerified: false,
  isActive: true,
  createdAt: '2026-01-10T09:00:00Z',
  lastLogin: '2026-03-01T12:30:00Z',
  github: { connected: false },
}

/** Renders the whole app at `path`, optionally signed in as `user`. */
export function renderApp(path: string, options: { user?: User | null } = {}) {
  if (options.user) localStorage.setItem('token', 'test-token')
  const router = createMemoryRouter(routes, { initialEntries: [path] })
  const queryClient = createQueryClient()
  const view = render(
    <AppProvider queryClient={queryClient}>
      <RouterProvider router={router} />
    </AppProvider>,
  )
  return { ...view, router, queryClient }
}
