import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { browserNavigation } from '@/features/github/api/get-auth-url'
import { fail, mockApi, ok, renderApp, testUser } from '@/test/utils'
import type { GitHubRepo, User } from '@/types/api'

// The notifications endpoint answers 404 here; it is only logged.
beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

const site: GitHubRepo = {
  id: 1001,
  name: 'portfolio',
  fullName: 'ada-gh/portfolio',
  description: 'My portfolio site',
  private: false,
  defaultBranch: 'main',
  updatedAt: '2026-03-04T10:15:00Z',
  url: 'https://github.com/ada-gh/portfolio',
}
const secret: GitHubRepo = {
  id: 1002,
  name: 'thesis',
  fullName: 'ada-gh/thesis',
  private: true,
  defaultBranch: 'trunk',
  updatedAt: '2026-02-20T08:00:00Z',
  url: 'https://github.com/ada-gh/thesis',
}

const connected: User = {
  ...testUser,
  github: {
    connected: true,
    username: 'ada-gh',
    avatar: 'https://avatars.example.com/ada.png',
    repos: [site, secret],
  },
}
const disconnected: User = { ...testUser, github: { connected: false, username: '', avatar: '', repos: [] } }

describe('GitHub integration, not connected', () => {
  it('connects by going to the authorize URL', async () => {
    const assign = vi.spyOn(browserNavigation, 'assign').mockImplementation(() => {})
    const { calls } = mockApi({
      'GET /api/auth/me': ok({ user: testUser }),
      'GET /api/auth/github/url': ok({ authUrl: 'https://github.com/login/oauth/authorize?state=abc' }),
    })
    renderApp('/github-integration', { user: testUser })
    expect(await screen.findByRole('heading', { level: 1, name: 'GitHub Integration' })).toBeInTheDocument()
    expect(screen.getByRole('heading', { name: 'Connect your GitHub account' })).toBeInTheDocument()
    expect(screen.queryByRole('button', { name: 'Refresh Repositories' })).not.toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Deploy a public repository' })).toHaveAttribute('href', '/projects/new')

    await userEvent.click(screen.getByRole('button', { name: 'Connect GitHub' }))
    await waitFor(() => expect(assign).toHaveBeenCalledWith('https://github.com/login/oauth/authorize?state=abc'))
    expect(calls.find((c) => c.path === '/api/auth/github/url')?.headers.Authorization).toBe('Bearer test-token')
  })

  it('says clearly when GitHub is not configured on the server', async () => {
    const assign = vi.spyOn(browserNavigation, 'assign').mockImplementation(() => {})
    const message =
      'GitHub is not configured on this server: set GANTRY_GITHUB_CLIENT_ID and GANTRY_GITHUB_CLIENT_SECRET'
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }), 'GET /api/auth/github/url': fail(503, message) })
    renderApp('/github-integration', { user: testUser })
    await userEvent.click(await screen.findByRole('button', { name: 'Connect GitHub' }))
    expect(await screen.findByRole('alert')).toHaveTextContent(message)
    expect(await screen.findByText('Failed to connect to GitHub')).toBeInTheDocument()
    expect(assign).not.toHaveBeenCalled()
  })

  it('toasts any other failure', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }), 'GET /api/auth/github/url': fail(500, 'Internal error.') })
    renderApp('/github-integration', { user: testUser })
    await userEvent.click(await screen.findByRole('button', { name: 'Connect GitHub' }))
    expect(await screen.findByText('Failed to connect to GitHub')).toBeInTheDocument()
    expect(screen.queryByText(/GitHub connect is unavailable/)).not.toBeInTheDocument()
  })
})

describe('GitHub integration, connected', () => {
  it('shows the account and the repository grid', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: connected }) })
    const { container } = renderApp('/github-integration', { user: connected })
    expect(await screen.findByText('@ada-gh')).toBeInTheDocument()
    expect(container.querySelector('img[src="https://avatars.example.com/ada.png"]')).toBeInTheDocument()
    expect(screen.getByText('2 repositories available to deploy')).toBeInTheDocument()
    expect(screen.getByRole('button', { name: 'Refresh Repositories' })).toBeInTheDocument()
    expect(screen.getByRole('button', { name: 'Disconnect GitHub' })).toBeInTheDocument()

    const portfolio = screen.getByRole('button', { name: 'ada-gh/portfolio, public: show details' })
    expect(portfolio).toHaveTextContent('Public')
    expect(portfolio).toHaveTextContent('main')
    expect(portfolio).toHaveTextContent('Updated Mar 4, 2026')
    expect(portfolio).toHaveTextContent('My portfolio site')
    const thesis = screen.getByRole('button', { name: 'ada-gh/thesis, private: show details' })
    expect(thesis).toHaveTextContent('Private')
    expect(thesis).toHaveTextContent('trunk')
    expect(thesis).toHaveTextContent('Updated Feb 20, 2026')
    expect(thesis).toHaveTextContent('No description')
  })

  it('opens a repository in the detail modal and deploys it', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: connected }) })
    const { router } = renderApp('/github-integration', { user: connected })
    await userEvent.click(await screen.findByRole('button', { name: 'ada-gh/thesis, private: show details' }))
    const dialog = screen.getByRole('dialog', { name: 'thesis' })
    const field = (label: string) => within(dialog).getByText(label).nextSibling
    expect(field('Default branch')).toHaveTextContent('trunk')
    expect(field('Privacy')).toHaveTextContent('Private')
    expect(field('Last updated')).toHaveTextContent('Feb 20, 2026, 08:00')
    expect(field('Repository ID')).toHaveTextContent('1002')
    const view = within(dialog).getByRole('link', { name: 'View on GitHub' })
    expect(view).toHaveAttribute('href', 'https://github.com/ada-gh/thesis')
    expect(view).toHaveAttribute('target', '_blank')
    expect(view).toHaveAttribute('rel', expect.stringContaining('noopener'))

    await userEvent.keyboard('{Escape}')
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument()

    await userEvent.click(screen.getByRole('button', { name: 'ada-gh/portfolio, public: show details' }))
    const deploy = within(screen.getByRole('dialog', { name: 'portfolio' })).getByRole('link', {
      name: 'Deploy This Repository',
    })
    expect(deploy).toHaveAttribute('href', '/projects/new?repo=1001')
    await userEvent.click(deploy)
    await waitFor(() => expect(router.state.location.pathname).toBe('/projects/new'))
    expect(router.state.location.search).toBe('?repo=1001')
  })

  it('searches the repositories', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: connected }) })
    renderApp('/github-integration', { user: connected })
    const search = await screen.findByRole('searchbox', { name: 'Search repositories' })
    await userEvent.type(search, 'portfolio site')
    expect(screen.getByText('1 of 2 repositories')).toBeInTheDocument()
    expect(screen.queryByRole('button', { name: /ada-gh\/thesis/ })).not.toBeInTheDocument()
    await userEvent.clear(search)
    await userEvent.type(search, 'nothing like it')
    expect(screen.getByText('No repositories found')).toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Clear search' }))
    expect(screen.getByText('2 repositories')).toBeInTheDocument()
  })

  it('refreshes the repositories', async () => {
    const fresh: GitHubRepo = { ...site, id: 1003, name: 'new-app', fullName: 'ada-gh/new-app', description: '' }
    const refreshed: User = { ...connected, github: { ...connected.github!, repos: [fresh, site, secret] } }
    const { calls } = mockApi({
      'GET /api/auth/me': ok({ user: connected }),
      'POST /api/auth/github/refresh': ok({ repos: refreshed.github!.repos, user: refreshed }),
    })
    renderApp('/github-integration', { user: connected })
    await userEvent.click(await screen.findByRole('button', { name: 'Refresh Repositories' }))
    expect(await screen.findByText('GitHub repositories refreshed successfully')).toBeInTheDocument()
    expect(screen.getByRole('button', { name: 'ada-gh/new-app, public: show details' })).toBeInTheDocument()
    expect(screen.getByText('3 repositories available to deploy')).toBeInTheDocument()
    expect(calls.filter((c) => c.path === '/api/auth/github/refresh')).toHaveLength(1)
  })

  it.each([
    [fail(502), 'Failed to refresh GitHub repositories'],
    [
      fail(400, 'GitHub access was revoked: connect your GitHub account again'),
      'GitHub access was revoked: connect your GitHub account again',
    ],
  ])('toasts a failed refresh and reloads the user', async (answer, text) => {
    let me = connected
    mockApi({
      'GET /api/auth/me': () => ok({ user: me }),
      'POST /api/auth/github/refresh': () => {
        me = disconnected // the server disconnects a revoked account
        return answer
      },
    })
    renderApp('/github-integration', { user: connected })
    await userEvent.click(await screen.findByRole('button', { name: 'Refresh Repositories' }))
    expect(await screen.findByText(text)).toBeInTheDocument()
    expect(await screen.findByRole('button', { name: 'Connect GitHub' })).toBeInTheDocument()
  })

  it('disconnects after confirming', async () => {
    const { calls } = mockApi({
      'GET /api/auth/me': ok({ user: connected }),
      'POST /api/auth/github/disconnect': ok({ user: disconnected }),
    })
    renderApp('/github-integration', { user: connected })
    await userEvent.click(await screen.findByRole('button', { name: 'Disconnect GitHub' }))
    const dialog = screen.getByRole('dialog', { name: 'Disconnect GitHub?' })
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }))
    expect(calls.filter((c) => c.path === '/api/auth/github/disconnect')).toHaveLength(0)

    await userEvent.click(screen.getByRole('button', { name: 'Disconnect GitHub' }))
    await userEvent.click(
      within(screen.getByRole('dialog', { name: 'Disconnect GitHub?' })).getByRole('button', {
        name: 'Disconnect GitHub',
      }),
    )
    expect(await screen.findByText('GitHub account disconnected successfully')).toBeInTheDocument()
    expect(await screen.findByRole('button', { name: 'Connect GitHub' })).toBeInTheDocument()
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument()
    expect(screen.queryByText('@ada-gh')).not.toBeInTheDocument()
  })

  it('toasts a failed disconnect and stays connected', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: connected }), 'POST /api/auth/github/disconnect': fail(500) })
    renderApp('/github-integration', { user: connected })
    await userEvent.click(await screen.findByRole('button', { name: 'Disconnect GitHub' }))
    await userEvent.click(
      within(screen.getByRole('dialog', { name: 'Disconnect GitHub?' })).getByRole('button', {
        name: 'Disconnect GitHub',
      }),
    )
    expect(await screen.findByText('Failed to disconnect GitHub account')).toBeInTheDocument()
    expect(screen.getByText('@ada-gh')).toBeInTheDocument()
  })

  it('shows an empty state without repositories', async () => {
    const none: User = { ...connected, github: { ...connected.github!, repos: [] } }
    mockApi({ 'GET /api/auth/me': ok({ user: none }) })
    renderApp('/github-integration', { user: none })
    expect(await screen.findByText('No repositories yet')).toBeInTheDocument()
    expect(screen.getByText('0 repositories available to deploy')).toBeInTheDocument()
  })
})
