import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import type { DashboardData } from '@/features/dashboard/types'
import { fail, mockApi, ok, renderApp, testUser } from '@/test/utils'

// The bell's fetch answers 404 here; that is only logged.
beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000).toISOString()

const data: DashboardData = {
  stats: { totalProjects: 3, activeDeployments: 2, totalDeployments: 9, failedDeployments: 1, thisMonth: 4 },
  recentProjects: [
    { id: 'p1', name: 'Portfolio', type: 'react', status: 'deployed', lastDeployed: hoursAgo(2), url: 'http://portfolio.localhost:8080' },
    { id: 'p2', name: 'Recipes', type: 'vue', status: 'failed', lastDeployed: hoursAgo(30), url: null },
    { id: 'p3', name: 'Club Site', type: 'static', status: 'draft', lastDeployed: null, url: null },
  ],
  recentDeployments: [
    { id: 'd3', projectName: 'Recipes', subdomain: 'recipes', status: 'building', buildTime: null, deployedAt: hoursAgo(0.01) },
    { id: 'd2', projectName: 'Recipes', subdomain: 'recipes', status: 'failed', buildTime: 1200, deployedAt: hoursAgo(30) },
    { id: 'd1', projectName: 'Portfolio', subdomain: 'portfolio', status: 'live', buildTime: 41_600, deployedAt: hoursAgo(2) },
  ],
}

const region = (name: string) => screen.getByRole('region', { name })

describe('dashboard screen', () => {
  it('shows the welcome, quick actions, stats, recent work and the guide', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }), 'GET /api/dashboard': ok(data) })
    renderApp('/dashboard', { user: testUser })
    expect(await screen.findByRole('heading', { level: 1, name: 'Dashboard' })).toBeInTheDocument()
    expect(screen.getByRole('heading', { name: 'Welcome back, Ada!' })).toBeInTheDocument()
    expect(await screen.findByText('2 apps are live, and you have deployed 4 times this month.')).toBeInTheDocument()

    const actions = within(screen.getByRole('heading', { name: 'Quick actions' }).parentElement!)
    expect(actions.getAllByRole('link').map((a) => a.getAttribute('href'))).toEqual([
      '/projects/new',
      '/projects',
      '/deployments',
      '/discover',
    ])

    for (const [label, value, note] of [
      ['Total Projects', '3', 'Repositories you deploy'],
      ['Active Deployments', '2', 'Live right now'],
      ['Total Deployments', '9', '1 failed'],
      ['This Month', '4', 'Deployments since the 1st'],
    ]) {
      const card = screen.getByText(label, { selector: 'dt span' }).closest('div')!
      expect(card).toHaveTextContent(`${label}${value}${note}`)
    }

    const projects = region('Recent Projects')
    const [portfolio, recipes, club] = within(projects).getAllByRole('listitem')
    expect(within(portfolio).getByRole('link', { name: 'Portfolio' })).toHaveAttribute('href', '/projects/p1')
    expect(portfolio).toHaveTextContent('Deployed 2h ago')
    expect(portfolio).toHaveTextContent('Live')
    expect(within(portfolio).getByRole('img', { name: 'React project' })).toBeInTheDocument()
    expect(within(portfolio).getByRole('link', { name: 'Visit Portfolio' })).toHaveAttribute('href', 'http://portfolio.localhost:8080')
    expect(recipes).toHaveTextContent('Deployed 1d ago')
    expect(recipes).toHaveTextContent('Failed')
    expect(within(recipes).queryByRole('link', { name: /Visit/ })).not.toBeInTheDocument()
    expect(club).toHaveTextContent('Never deployed')
    expect(club).toHaveTextContent('Draft')
    expect(within(projects).getByRole('link', { name: 'View all' })).toHaveAttribute('href', '/projects')

    const deployments = region('Recent Deployments')
    const links = within(deployments).getAllByRole('link').filter((a) => a.getAttribute('href')?.startsWith('/deployments/'))
    expect(links.map((a) => a.getAttribute('href'))).toEqual(['/deployments/d3', '/deployments/d2', '/deployments/d1'])
    expect(links[0]).toHaveTextContent('Recipes')
    expect(links[0]).toHaveTextContent('Building')
    expect(links[0]).toHaveTextContent('Build time —')
    expect(links[0]).toHaveTextContent('Just now')
    expect(links[1]).toHaveTextContent('Build time 1s')
    expect(links[2]).toHaveTextContent('portfolio')
    expect(links[2]).toHaveTextContent('Build time 42s')
    expect(links[2]).toHaveTextContent('Live')
    expect(within(deployments).getByRole('link', { name: 'View all' })).toHaveAttribute('href', '/deployments')

    const guide = screen.getByRole('heading', { name: 'Getting Started' }).closest('section')!
    expect(guide).toHaveTextContent('3 of 3 done')
    expect(within(guide).getAllByRole('listitem')).toHaveLength(3)
  })

  it('shows empty states and the first steps for a new account', async () => {
    mockApi({
      'GET /api/auth/me': ok({ user: testUser }),
      'GET /api/dashboard': ok({
        stats: { totalProjects: 0, activeDeployments: 0, totalDeployments: 0, failedDeployments: 0, thisMonth: 0 },
        recentProjects: [],
        recentDeployments: [],
      }),
    })
    renderApp('/dashboard', { user: testUser })
    expect(await screen.findByText('No projects yet')).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Create Your First Project' })).toHaveAttribute('href', '/projects/new')
    expect(screen.getByText('No deployments yet')).toBeInTheDocument()
    expect(screen.getByText('Total Deployments', { selector: 'dt span' }).closest('div')).toHaveTextContent('0None failed')
    const guide = screen.getByRole('heading', { name: 'Getting Started' }).closest('section')!
    expect(guide).toHaveTextContent('0 of 3 done')
    expect(within(guide).getByRole('link', { name: 'Connect GitHub →' })).toHaveAttribute('href', '/github-integration')
    expect(within(guide).getByRole('link', { name: 'New project →' })).toHaveAttribute('href', '/projects/new')
  })

  it('shows skeletons while loading', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }), 'GET /api/dashboard': { ...ok(data), delay: 300 } })
    renderApp('/dashboard', { user: testUser })
    expect(await screen.findByRole('heading', { level: 1, name: 'Dashboard' })).toBeInTheDocument()
    expect(screen.queryByRole('link', { name: 'Portfolio' })).not.toBeInTheDocument()
    expect(document.querySelectorAll('[aria-hidden="true"].motion-safe\\:animate-pulse').length).toBeGreaterThan(4)
    expect(await screen.findByRole('link', { name: 'Portfolio' })).toBeInTheDocument()
  })

  it('says when loading failed and tries again', async () => {
    let calls = 0
    mockApi({
      'GET /api/auth/me': ok({ user: testUser }),
      'GET /api/dashboard': () => (++calls <= 2 ? fail(500, 'Internal error.') : ok(data)),
    })
    renderApp('/dashboard', { user: testUser })
    const alert = await screen.findByRole('alert', {}, { timeout: 5000 })
    expect(alert).toHaveTextContent('Failed to load dashboard data')
    // The toast says it too (SPEC §8).
    await waitFor(() => expect(screen.getAllByText('Failed to load dashboard data')).toHaveLength(2))
    await userEvent.click(within(alert).getByRole('button', { name: 'Try Again' }))
    expect(await screen.findByRole('link', { name: 'Portfolio' })).toBeInTheDocument()
    await waitFor(() => expect(screen.queryByRole('alert')).not.toBeInTheDocument())
  })

  it('Refresh fetches the dashboard again', async () => {
    const { calls } = mockApi({ 'GET /api/auth/me': ok({ user: testUser }), 'GET /api/dashboard': ok(data) })
    renderApp('/dashboard', { user: testUser })
    await screen.findByRole('link', { name: 'Portfolio' })
    const count = () => calls.filter((c) => c.path === '/api/dashboard').length
    expect(count()).toBe(1)
    await userEvent.click(within(region('Recent Projects')).getByRole('button', { name: 'Refresh' }))
    await waitFor(() => expect(count()).toBe(2))
  })
})
