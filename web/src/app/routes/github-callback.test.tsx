import { act, screen } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { fail, mockApi, ok, renderApp, testUser } from '@/test/utils'

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true })
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})
afterEach(() => {
  vi.useRealTimers()
})

describe('GitHub callback', () => {
  it('finishes the sign-in with this session, refreshes the user and goes to the dashboard after 2 s', async () => {
    const linked = { ...testUser, github: { connected: true, username: 'ada-gh' } }
    const { calls } = mockApi({
      'GET /api/auth/me': ok({ user: testUser }),
      'POST /api/auth/github/callback': ok({ user: linked }),
    })
    const { router } = renderApp('/github-callback?code=gh-code&state=sealed', { user: testUser })
    expect(await screen.findByText('GitHub account linked successfully! Redirecting...')).toBeInTheDocument()
    const finish = calls.find((c) => c.method === 'POST' && c.path === '/api/auth/github/callback')
    expect(finish?.body).toEqual({ code: 'gh-code', state: 'sealed' })
    // The session that started the sign-in finishes it: no new token.
    expect(finish?.headers.Authorization).toBe('Bearer test-token')
    expect(localStorage.getItem('token')).toBe('test-token')
    await act(() => vi.advanceTimersByTimeAsync(1900))
    expect(router.state.location.pathname).toBe('/github-callback')
    await act(() => vi.advanceTimersByTimeAsync(200))
    expect(router.state.location.pathname).toBe('/dashboard')
  })

  it('shows why the server refused and goes to GitHub Integration after 3 s', async () => {
    mockApi({
      'GET /api/auth/me': ok({ user: testUser }),
      'POST /api/auth/github/callback': fail(400, 'This GitHub sign-in was started in another browser, tab or account.'),
    })
    const { router } = renderApp('/github-callback?code=c&state=s', { user: testUser })
    expect(await screen.findByText('GitHub authentication failed. Please try again.')).toBeInTheDocument()
    expect(screen.getByText('This GitHub sign-in was started in another browser, tab or account.')).toBeInTheDocument()
    await act(() => vi.advanceTimersByTimeAsync(3100))
    expect(router.state.location.pathname).toBe('/github-integration')
  })

  it.each([
    ['/github-callback?error=access_denied', 'GitHub authentication failed. Please try again.'],
    ['/github-callback', 'GitHub sent no authorization back. Please try again.'],
  ])('%s shows an error and goes to GitHub Integration after 3 s', async (path, text) => {
    const { calls } = mockApi({ 'GET /api/auth/me': ok({ user: testUser }) })
    localStorage.setItem('token', 'existing')
    const { router } = renderApp(path)
    expect(await screen.findByText(text)).toBeInTheDocument()
    expect(calls.some((c) => c.path === '/api/auth/github/callback')).toBe(false)
    await act(() => vi.advanceTimersByTimeAsync(2900))
    expect(router.state.location.pathname).toBe('/github-callback')
    await act(() => vi.advanceTimersByTimeAsync(200))
    expect(router.state.location.pathname).toBe('/github-integration')
  })
})
