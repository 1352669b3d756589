import { act, screen } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { mockApi, ok, renderApp, testUser } from '@/test/utils'

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true })
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})
afterEach(() => {
  vi.useRealTimers()
})

describe('GitHub callback', () => {
  it('stores the token, refreshes the user and goes to the dashboard after 2 s', async () => {
    const { calls } = mockApi({ 'GET /api/auth/me': ok({ user: testUser }) })
    const { router } = renderApp('/github-callback?token=gh-token&linked=true')
    expect(await screen.findByText('GitHub account linked successfully! Redirecting...')).toBeInTheDocument()
    expect(localStorage.getItem('token')).toBe('gh-token')
    expect(calls.find((c) => c.path === '/api/auth/me')?.headers.Authorization).toBe('Bearer gh-token')
    await act(() => vi.advanceTimersByTimeAsync(1900))
    expect(router.state.location.pathname).toBe('/github-callback')
    await act(() => vi.advanceTimersByTimeAsync(200))
    expect(router.state.location.pathname).toBe('/dashboard')
  })

  it('says "connected" when the account was not linked', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }) })
    renderApp('/github-callback?token=gh-token')
    expect(await screen.findByText('GitHub account connected successfully! Redirecting...')).toBeInTheDocument()
  })

  it.each([
    ['/github-callback?error=access_denied', 'GitHub authentication failed. Please try again.'],
    ['/github-callback', 'No authentication token received. Please try again.'],
  ])('%s shows an error and goes to GitHub Integration after 3 s', async (path, text) => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }) })
    localStorage.setItem('token', 'existing')
    const { router } = renderApp(path)
    expect(await screen.findByText(text)).toBeInTheDocument()
    await act(() => vi.advanceTimersByTimeAsync(2900))
    expect(router.state.location.pathname).toBe('/github-callback')
    await act(() => vi.advanceTimersByTimeAsync(200))
    expect(router.state.location.pathname).toBe('/github-integration')
  })
})
