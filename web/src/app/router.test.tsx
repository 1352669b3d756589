import { screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { makeDeployment, makeProject } from '@/test/fixtures'
import { fail, mockApi, ok, renderApp, testUser } from '@/test/utils'

// The landing page's featured fetch fails here (404); that is only logged.
beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

const signedIn = () =>
  mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/projects': ok({ projects: [] }),
    'GET /api/projects/p1': ok({ project: makeProject({ name: 'Site' }) }),
    'GET /api/deployments': ok({ deployments: [] }),
    'GET /api/deployments/d1': ok({ deployment: makeDeployment({ project: { name: 'Site' } }) }),
    'GET /api/deployments/d1/logs': ok({ logs: [], total: 0 }),
  })

describe('routes for a logged-in user', () => {
  it.each([
    ['/', '/dashboard'],
    ['/no/such/page', '/dashboard'],
    ['/login', '/dashboard'],
    ['/register', '/dashboard'],
  ])('%s goes to %s', async (from, to) => {
    signedIn()
    const { router } = renderApp(from, { user: testUser })
    await waitFor(() => expect(router.state.location.pathname).toBe(to))
    expect(await screen.findByRole('heading', { level: 1, name: 'Dashboard' })).toBeInTheDocument()
  })

  it.each([
    ['/dashboard', 'Dashboard'],
    ['/discover', 'Discover'],
    ['/projects', 'My Projects'],
    ['/projects/new', 'New Project'],
    ['/projects/p1', 'Site'],
    ['/projects/p1/edit', 'Edit Project'],
    ['/deployments', 'Deployments'],
    ['/deployments/d1', 'Site Deployment'],
    ['/profile', 'Profile'],
    ['/settings', 'Settings'],
    ['/github-integration', 'GitHub Integration'],
    ['/notifications', 'Notifications'],
  ])('%s shows "%s" in the app layout', async (path, title) => {
    signedIn()
    const { router } = renderApp(path, { user: testUser })
    expect(await screen.findByRole('heading', { level: 1, name: title })).toBeInTheDocument()
    expect(router.state.location.pathname).toBe(path)
    expect(screen.getByRole('button', { name: 'Account menu' })).toBeInTheDocument()
  })

  it.each([
    ['/projects/abc/edit', 'Projects'],
    ['/projects/new', 'Projects'],
    ['/deployments/xyz', 'Deployments'],
    ['/github-integration', 'GitHub Integration'],
  ])('%s highlights %s in the sidebar', async (path, entry) => {
    signedIn()
    renderApp(path, { user: testUser })
    const sidebar = await screen.findByRole('navigation', { name: 'Main' })
    const current = sidebar.querySelectorAll('[aria-current="page"]')
    expect(current).toHaveLength(1)
    expect(current[0]).toHaveTextContent(entry)
  })

  it('shows the user, role and plan in the sidebar', async () => {
    mockApi({
      'GET /api/auth/me': ok({
        user: { ...testUser, role: 'sorcerer', subscription: undefined, fullName: 'Grace Hopper' },
      }),
    })
    renderApp('/dashboard', { user: testUser })
    const sidebar = (await screen.findByRole('navigation', { name: 'Main' })).parentElement!
    expect(sidebar).toHaveTextContent('Grace Hopper')
    expect(sidebar).toHaveTextContent('Student')
    expect(sidebar).toHaveTextContent('Free plan')
    expect(sidebar).toHaveTextContent('3 projects · 5 deployments')
    expect(sidebar).toHaveTextContent('GH')
  })

  it('signs out from the user menu', async () => {
    signedIn()
    const { router } = renderApp('/profile', { user: testUser })
    await userEvent.click(await screen.findByRole('button', { name: 'Account menu' }))
    await userEvent.click(screen.getByRole('menuitem', { name: 'Sign out' }))
    await waitFor(() => expect(router.state.location.pathname).toBe('/'))
    expect(localStorage.getItem('token')).toBeNull()
    expect(await screen.findByText('Logged out successfully')).toBeInTheDocument()
    expect(await screen.findByRole('heading', { level: 1, name: /ship your projects/i })).toBeInTheDocument()
  })
})

describe('routes for a visitor', () => {
  it.each([
    '/projects',
    '/projects/new',
    '/projects/p1',
    '/projects/p1/edit',
    '/deployments',
    '/deployments/d1',
    '/profile',
    '/settings',
    '/github-integration',
    '/notifications',
    '/no/such/page',
  ])('%s goes to /', async (path) => {
    mockApi({})
    const { router } = renderApp(path)
    await waitFor(() => expect(router.state.location.pathname).toBe('/'))
    expect(
      await screen.findByRole('heading', { level: 1, name: /ship your projects/i }),
    ).toBeInTheDocument()
  })

  it('/dashboard asks to log in', async () => {
    mockApi({})
    const { router } = renderApp('/dashboard')
    const link = await screen.findByRole('link', { name: 'Go to Login' })
    expect(router.state.location.pathname).toBe('/dashboard')
    await userEvent.click(link)
    expect(router.state.location.pathname).toBe('/login')
  })

  it.each([
    ['/login', 'Welcome back'],
    ['/register', 'Create your account'],
    ['/discover', 'Discover'],
  ])('%s stays open in the public layout', async (path, heading) => {
    mockApi({})
    const { router } = renderApp(path)
    expect(await screen.findByRole('heading', { level: 1, name: heading })).toBeInTheDocument()
    expect(router.state.location.pathname).toBe(path)
    expect(screen.queryByRole('button', { name: 'Account menu' })).not.toBeInTheDocument()
  })

  it('a rejected token is dropped silently and the visitor is sent to /', async () => {
    const { calls } = mockApi({ 'GET /api/auth/me': fail(401, 'Invalid token') })
    const { router } = renderApp('/projects', { user: testUser })
    await waitFor(() => expect(router.state.location.pathname).toBe('/'))
    expect(localStorage.getItem('token')).toBeNull()
    expect(calls.filter((c) => c.path === '/api/auth/me')).toHaveLength(1)
    expect(screen.queryByText('Invalid token')).not.toBeInTheDocument()
  })

  it('shows a neutral loader, not a redirect, while the session is checked', async () => {
    mockApi({ 'GET /api/auth/me': { ...ok({ user: testUser }), delay: 100 } })
    const { router } = renderApp('/projects', { user: testUser })
    expect(screen.getByRole('status')).toHaveTextContent('Loading')
    expect(router.state.location.pathname).toBe('/projects')
    expect(await screen.findByRole('heading', { level: 1, name: 'My Projects' })).toBeInTheDocument()
    expect(router.state.location.pathname).toBe('/projects')
  })
})
