// The callback's handling of its URL: the token leaves the address bar once
// read, and a known error code adds its explanation under SPEC's message.
// (github-callback.test.tsx covers the texts and redirects.)
import { screen, waitFor } from '@testing-library/react'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { mockApi, ok, renderApp, testUser } from '@/test/utils'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

describe('GitHub callback URL', () => {
  it('removes the token from the address once stored', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }) })
    const { router } = renderApp('/github-callback?token=gh-token&linked=true')
    expect(await screen.findByText('GitHub account linked successfully! Redirecting...')).toBeInTheDocument()
    expect(localStorage.getItem('token')).toBe('gh-token')
    await waitFor(() => expect(router.state.location.search).toBe('?linked=true'))
    expect(router.state.location.pathname).toBe('/github-callback')
  })

  it('replaces the browser history entry that held the token', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }) })
    window.history.replaceState({ kept: 1 }, '', '/github-callback?token=gh-token&linked=true')
    const length = window.history.length
    renderApp('/github-callback?token=gh-token&linked=true')
    expect(await screen.findByText('GitHub account linked successfully! Redirecting...')).toBeInTheDocument()
    expect(window.location.pathname + window.location.search).toBe('/github-callback?linked=true')
    expect(window.history.state).toEqual({ kept: 1 })
    expect(window.history.length).toBe(length)
    window.history.replaceState(null, '', '/')
  })

  it.each([
    ['already_linked', 'This GitHub account is already connected to another Gantry account.'],
    ['access_denied', 'Authorization was cancelled on GitHub.'],
    ['expired_state', 'The sign-in took longer than 10 minutes.'],
  ])('explains error=%s', async (code, detail) => {
    mockApi({})
    renderApp(`/github-callback?error=${code}`)
    expect(await screen.findByText('GitHub authentication failed. Please try again.')).toBeInTheDocument()
    expect(screen.getByText(detail)).toBeInTheDocument()
  })

  it('adds nothing for an unknown code', async () => {
    mockApi({})
    renderApp('/github-callback?error=%3Cb%3Ebold%3C%2Fb%3E')
    expect(await screen.findByText('GitHub authentication failed. Please try again.')).toBeInTheDocument()
    expect(screen.queryByText(/bold/)).not.toBeInTheDocument()
  })
})
