// Ending sessions: Sign out ends the session on the server and forgets the
// token whatever the server says; the profile's "Sign out everywhere" ends
// every session after a confirmation and sends the user to /login.
import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { fail, mockApi, ok, renderApp, testUser, type FakeHandler } from '@/test/utils'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

function api(extra: Record<string, FakeHandler> = {}) {
  return mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/users/stats': ok({ stats: { totalProjects: 0, totalDeployments: 0, activeDeployments: 0, accountAge: 1 } }),
    ...extra,
  })
}

async function signOut() {
  await userEvent.click(await screen.findByRole('button', { name: 'Account menu' }))
  await userEvent.click(screen.getByRole('menuitem', { name: 'Sign out' }))
}

describe('Sign out', () => {
  it('ends the session on the server, then forgets the token', async () => {
    const { calls } = api({ 'POST /api/auth/logout': ok({}) })
    const { router } = renderApp('/dashboard', { user: testUser })
    await signOut()
    await waitFor(() => expect(router.state.location.pathname).toBe('/'))
    const logout = calls.filter((c) => c.path === '/api/auth/logout')
    expect(logout).toHaveLength(1)
    expect(logout[0].method).toBe('POST')
    expect(logout[0].headers.Authorization).toBe('Bearer test-token')
    expect(localStorage.getItem('token')).toBeNull()
    expect(await screen.findByText('Logged out successfully')).toBeInTheDocument()
  })

  it.each([
    ['the session had already ended', fail(401, 'Not authorized: please sign in')],
    ['the server failed', fail(500, 'Internal error.')],
  ])('forgets the token even when %s', async (_, answer) => {
    api({ 'POST /api/auth/logout': answer })
    const { router } = renderApp('/dashboard', { user: testUser })
    await signOut()
    await waitFor(() => expect(router.state.location.pathname).toBe('/'))
    expect(localStorage.getItem('token')).toBeNull()
    expect(await screen.findByText('Logged out successfully')).toBeInTheDocument()
    expect(screen.queryByText('Internal error.')).not.toBeInTheDocument()
  })

  it('forgets the token when the server cannot be reached', async () => {
    const { fetchMock } = api()
    const { router } = renderApp('/dashboard', { user: testUser })
    await screen.findByRole('button', { name: 'Account menu' })
    const answer = fetchMock.getMockImplementation()!
    fetchMock.mockImplementation(async (input, init) => {
      if (String(input).includes('/api/auth/logout')) throw new TypeError('Failed to fetch')
      return answer(input, init)
    })
    await signOut()
    await waitFor(() => expect(router.state.location.pathname).toBe('/'))
    expect(localStorage.getItem('token')).toBeNull()
  })
})

describe('Sign out everywhere', () => {
  async function openDialog() {
    const card = (await screen.findByRole('heading', { name: 'Sessions' })).closest('div')!.parentElement!
    await userEvent.click(within(card).getByRole('button', { name: 'Sign out everywhere' }))
    return screen.getByRole('dialog', { name: 'Sign out everywhere?' })
  }

  it('asks, shows that it is busy, ends every session and goes to /login', async () => {
    const { calls } = api({ 'POST /api/auth/logout-all': { ...ok({ ended: 3 }), delay: 150 } })
    const { router } = renderApp('/profile', { user: testUser })
    const dialog = await openDialog()
    expect(dialog).toHaveTextContent('this one included')
    expect(calls.some((c) => c.path === '/api/auth/logout-all')).toBe(false)
    await userEvent.click(within(dialog).getByRole('button', { name: 'Sign out everywhere' }))
    const busy = await within(dialog).findByRole('button', { name: 'Signing out...' })
    expect(busy).toBeDisabled()
    expect(within(dialog).getByRole('button', { name: 'Cancel' })).toBeDisabled()
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'))
    const call = calls.find((c) => c.path === '/api/auth/logout-all')!
    expect(call.method).toBe('POST')
    expect(call.headers.Authorization).toBe('Bearer test-token')
    expect(localStorage.getItem('token')).toBeNull()
    expect(await screen.findByText('Signed out everywhere')).toBeInTheDocument()
    expect(await screen.findByRole('button', { name: 'Sign in' })).toBeInTheDocument()
    expect(router.state.location.pathname).toBe('/login')
    // The server already ended this session: no separate logout call.
    expect(calls.some((c) => c.path === '/api/auth/logout')).toBe(false)
  })

  it('changes nothing when cancelled', async () => {
    const { calls } = api()
    const { router } = renderApp('/profile', { user: testUser })
    const dialog = await openDialog()
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }))
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument()
    expect(calls.some((c) => c.path === '/api/auth/logout-all')).toBe(false)
    expect(router.state.location.pathname).toBe('/profile')
    expect(localStorage.getItem('token')).toBe('test-token')
  })

  it.each([
    [fail(503, 'Database unavailable'), 'Database unavailable'],
    [fail(500), 'Failed to sign out everywhere'],
  ])('keeps the session and says so when it fails %#', async (answer, text) => {
    api({ 'POST /api/auth/logout-all': answer })
    const { router } = renderApp('/profile', { user: testUser })
    const dialog = await openDialog()
    await userEvent.click(within(dialog).getByRole('button', { name: 'Sign out everywhere' }))
    expect(await screen.findByText(text)).toBeInTheDocument()
    expect(router.state.location.pathname).toBe('/profile')
    expect(localStorage.getItem('token')).toBe('test-token')
    expect(within(dialog).getByRole('button', { name: 'Sign out everywhere' })).toBeEnabled()
  })
})

describe('a session ended elsewhere', () => {
  it('sends the user to /login on the next call that the server refuses', async () => {
    let meCalls = 0
    api({
      'GET /api/auth/me': () => (++meCalls === 1 ? ok({ user: testUser }) : fail(401, 'Not authorized: please sign in')),
      'GET /api/projects': fail(401, 'Not authorized: please sign in'),
    })
    const { router } = renderApp('/profile', { user: testUser })
    await screen.findByRole('heading', { level: 1, name: 'Profile' })
    // Signed out everywhere from another browser: the next call is refused.
    await router.navigate('/projects')
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'))
    expect(localStorage.getItem('token')).toBeNull()
    expect(await screen.findByRole('button', { name: 'Sign in' })).toBeInTheDocument()
    expect(screen.queryByText('Not authorized: please sign in')).not.toBeInTheDocument()
  })
})
