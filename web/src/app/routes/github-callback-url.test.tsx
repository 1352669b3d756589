// The callback's handling of its URL: GitHub's code and state leave the
// address bar once read, and a known error code adds its explanation under SPEC's message.
// (github-callback.test.tsx covers the texts and redirects.)
import { screen, waitFor } from '@testing-library/react'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { mockApi, ok, renderApp, testUser } from '@/test/utils'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

describe('GitHub callback URL', () => {
  it('removes the code and state from the address once read', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }), 'POST /api/auth/github/callback': ok({ user: testUser }) })
    const { router } = renderApp('/github-callback?code=gh-code&state=sealed&x=1', { user: testUser })
    expect(await screen.findByText('GitHub account linked successfully! Redirecting...')).toBeInTheDocument()
    await waitFor(() => expect(router.state.location.search).toBe('?x=1'))
    expect(router.state.location.pathname).toBe('/github-callback')
  })

  it('replaces the browser history entry that held them', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }), 'POST /api/auth/github/callback': ok({ user: testUser }) })
    window.history.replaceState({ kept: 1 }, '', '/github-callback?code=gh-code&state=sealed')
    const length = window.history.length
    renderApp('/github-callback?code=gh-code&state=sealed', { user: testUser })
    expect(await screen.findByText('GitHub account linked successfully! Redirecting...')).toBeInTheDocument()
    expect(window.location.pathname + window.location.search).toBe('/github-callback')
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
