// The Production, Previews and History cards of the project detail screen.
import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { makeDeployment, makeProject } from '@/test/fixtures'
import { fail, mockApi, ok, renderApp, testUser, type FakeHandler } from '@/test/utils'
import { PROMOTED } from '../api/promote-deployment'
import { REDEPLOY_STARTED } from '../api/redeploy-deployment'
import type { Deployment } from '../types'
import { PROMOTE_TITLE } from './history-card'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

const hours = (n: number) => new Date(Date.now() - n * 3600_000).toISOString()

const production: Deployment[] = [
  makeDeployment({
    _id: 'd4',
    status: 'failed',
    target: 'production',
    createdAt: hours(1),
    metadata: { commitHash: '4444444aaaa', commitMessage: 'Break the build', trigger: 'hook', branch: 'main' },
  }),
  makeDeployment({
    _id: 'd3',
    status: 'live',
    target: 'production',
    createdAt: hours(2),
    metadata: { commitHash: '3333333aaaa', commitMessage: 'Add contact form', trigger: 'push', author: 'Maya Chen', branch: 'main' },
  }),
  makeDeployment({
    _id: 'd2',
    status: 'stopped',
    target: 'production',
    createdAt: hours(30),
    metadata: { commitHash: '2222222aaaa', commitMessage: 'Dark mode', trigger: 'manual', branch: 'main' },
  }),
  makeDeployment({
    _id: 'd1',
    status: 'stopped',
    target: 'production',
    createdAt: hours(300),
    prunedAt: hours(10),
    metadata: { commitHash: '1111111aaaa', commitMessage: 'First version', trigger: 'manual', branch: 'main' },
  }),
]

const previews: Deployment[] = [
  makeDeployment({
    _id: 'pr12',
    status: 'live',
    target: 'preview',
    url: 'http://portfolio-site--pr-12.localhost:8080',
    createdAt: hours(3),
    metadata: { branch: 'fix-nav', pullRequest: 12, trigger: 'pull_request' },
  }),
  makeDeployment({
    _id: 'br1',
    status: 'building',
    target: 'preview',
    url: 'http://portfolio-site--feature-blog.localhost:8080',
    createdAt: hours(5),
    metadata: { branch: 'feature/blog', trigger: 'push' },
  }),
]

function setup(handlers: Record<string, FakeHandler> = {}) {
  const api = mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/projects/p1': ok({ project: makeProject({ activeDeployment: { _id: 'd3', subdomain: 'portfolio-site' } }) }),
    'GET /api/projects/p1/previews': ok({ previews }),
    'GET /api/projects/p1/github': fail(404, 'Not a GitHub project'),
    'GET /api/deployments': ({ url }) =>
      url.searchParams.get('projectId') === 'p1' && url.searchParams.get('target') === 'production'
        ? ok({ deployments: production })
        : ok({ deployments: [] }),
    ...handlers,
  })
  return { ...api, ...renderApp('/projects/p1', { user: testUser }) }
}

const card = (name: string) =>
  screen.getByRole('heading', { level: 2, name }).closest('.rounded-xl') as HTMLElement

describe('Production card', () => {
  it('shows the live production deployment, its commit and trigger', async () => {
    setup()
    const prod = await screen.findByTestId('production-card')
    await within(prod).findByText('Add contact form')
    expect(within(prod).getByText('3333333')).toBeInTheDocument()
    expect(within(prod).getByTestId('production-trigger')).toHaveTextContent('Pushed by Maya Chen')
    expect(within(prod).getByText('Live')).toBeInTheDocument()
    expect(within(prod).getByRole('link', { name: /portfolio-site\.localhost:8080/ })).toHaveAttribute(
      'href',
      'http://portfolio-site.localhost:8080',
    )
    expect(within(prod).getByRole('link', { name: 'View deployment' })).toHaveAttribute('href', '/deployments/d3')
  })

  it('redeploys the live deployment, with a busy label, and without cache', async () => {
    const { calls } = setup({
      'POST /api/deployments/d3/redeploy': { status: 201, delay: 150, body: { success: true, data: { deployment: { _id: 'd5' } } } },
    })
    const prod = await screen.findByTestId('production-card')
    await userEvent.click(await within(prod).findByRole('button', { name: 'Redeploy' }))
    expect(await within(prod).findByRole('button', { name: 'Redeploying...' })).toBeDisabled()
    expect(await screen.findByText(REDEPLOY_STARTED)).toBeInTheDocument()
    await userEvent.click(within(prod).getByRole('button', { name: 'Redeploy without cache' }))
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'POST').map((c) => [c.path, c.body])).toEqual([
        ['/api/deployments/d3/redeploy', {}],
        ['/api/deployments/d3/redeploy', { noCache: true }],
      ]),
    )
  })

  it('says when the redeploy is refused', async () => {
    setup({ 'POST /api/deployments/d3/redeploy': fail(403, 'Your storage is full') })
    const prod = await screen.findByTestId('production-card')
    await userEvent.click(await within(prod).findByRole('button', { name: 'Redeploy' }))
    expect(await screen.findByText('Your storage is full')).toBeInTheDocument()
  })

  it('has an empty state before the first deployment', async () => {
    setup({ 'GET /api/deployments': ok({ deployments: [] }), 'GET /api/projects/p1': ok({ project: makeProject({ activeDeployment: null }) }) })
    expect(await screen.findByText('Nothing in production yet')).toBeInTheDocument()
    expect(screen.queryByRole('button', { name: 'Redeploy' })).not.toBeInTheDocument()
  })
})

describe('Previews card', () => {
  it('lists each preview by pull request or branch, with its status, URL and age', async () => {
    setup()
    const rows = await screen.findAllByTestId('preview-row')
    expect(rows).toHaveLength(2)
    expect(within(rows[0]).getByRole('link', { name: 'Pull request #12' })).toHaveAttribute('href', '/deployments/pr12')
    expect(within(rows[0]).getByText('Live')).toBeInTheDocument()
    expect(within(rows[0]).getByRole('link', { name: /portfolio-site--pr-12/ })).toHaveAttribute(
      'href',
      'http://portfolio-site--pr-12.localhost:8080',
    )
    expect(within(rows[0]).getByText('3h ago')).toBeInTheDocument()
    expect(within(rows[1]).getByRole('link', { name: 'feature/blog' })).toBeInTheDocument()
    expect(within(rows[1]).getByText('Building')).toBeInTheDocument()
    // Not live yet: the URL is shown but not a link.
    expect(within(rows[1]).queryByRole('link', { name: /feature-blog\.localhost/ })).not.toBeInTheDocument()
  })

  it('has an empty state', async () => {
    setup({ 'GET /api/projects/p1/previews': ok({ previews: [] }) })
    expect(await screen.findByText('No previews yet')).toBeInTheDocument()
  })

  it("opens a private repository's previews to anyone with the link, on the owner's word", async () => {
    const { calls } = setup({
      'GET /api/projects/p1/preview-access': ok({ access: { private: true, open: false } }),
      'PUT /api/projects/p1/preview-access': ok({ access: { private: true, open: true } }),
    })
    const toggle = await screen.findByRole('switch', { name: 'Anyone with the link can open previews' })
    expect(toggle).toHaveAttribute('aria-checked', 'false')
    expect(screen.getByText(/its previews ask for your Gantry sign-in/)).toBeInTheDocument()
    await userEvent.click(toggle)
    await waitFor(() => expect(toggle).toHaveAttribute('aria-checked', 'true'))
    expect(calls.find((c) => c.method === 'PUT' && c.path === '/api/projects/p1/preview-access')?.body).toEqual({ open: true })
  })

  it('shows no switch for a public repository', async () => {
    setup({ 'GET /api/projects/p1/preview-access': ok({ access: { private: false, open: false } }) })
    await screen.findAllByTestId('preview-row')
    expect(screen.queryByRole('switch', { name: 'Anyone with the link can open previews' })).not.toBeInTheDocument()
  })
})

describe('History card', () => {
  it('lists production deployments with their trigger, and Promote on the earlier successful one', async () => {
    setup()
    const rows = await screen.findAllByTestId('history-row')
    expect(rows).toHaveLength(4)
    expect(within(rows[0]).getByText(/Deploy hook/)).toBeInTheDocument()
    expect(within(rows[1]).getByText(/Pushed by Maya Chen/)).toBeInTheDocument()
    expect(within(rows[1]).getByText('Current')).toBeInTheDocument()
    expect(within(rows[2]).getByText(/Manual/)).toBeInTheDocument()
    const promotable = rows.map((r) => within(r).queryByRole('button', { name: /Promote/ }) !== null)
    // Not the failed one, not the live one, not the one whose files were removed.
    expect(promotable).toEqual([false, false, true, false])
    expect(card('History')).toBeInTheDocument()
  })

  it('asks, promotes, says so and refetches', async () => {
    let live = 'd3'
    const { calls } = setup({
      'GET /api/projects/p1': () => ok({ project: makeProject({ activeDeployment: { _id: live, subdomain: 'portfolio-site' } }) }),
      'POST /api/deployments/d2/promote': () => {
        live = 'd2'
        return ok({ deployment: { ...production[2], status: 'live', promotedAt: new Date().toISOString() } })
      },
      // As the server answers: the promoted one live, the one it replaced stopped.
      'GET /api/deployments': () =>
        ok({
          deployments: production.map((d) =>
            d._id === 'd2' || d._id === 'd3' ? { ...d, status: d._id === live ? 'live' : 'stopped' } : d,
          ),
        }),
    })
    const rows = await screen.findAllByTestId('history-row')
    await userEvent.click(within(rows[2]).getByRole('button', { name: 'Promote 2222222' }))
    const dialog = await screen.findByRole('dialog', { name: PROMOTE_TITLE })
    expect(dialog).toHaveTextContent('2222222')
    await userEvent.click(within(dialog).getByRole('button', { name: 'Promote' }))
    expect(await screen.findByText(PROMOTED)).toBeInTheDocument()
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual(['/api/deployments/d2/promote'])
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument())
    // The project and the lists are fetched again.
    await waitFor(() => expect(calls.filter((c) => c.path === '/api/projects/p1').length).toBeGreaterThan(1))
    await waitFor(() => expect(within(screen.getAllByTestId('history-row')[2]).getByText('Current')).toBeInTheDocument())
  })

  it('shows the server message when a promote is refused', async () => {
    setup({ 'POST /api/deployments/d2/promote': fail(409, 'A preview cannot be promoted to production') })
    const rows = await screen.findAllByTestId('history-row')
    await userEvent.click(within(rows[2]).getByRole('button', { name: /Promote/ }))
    await userEvent.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Promote' }))
    expect(await screen.findByText('A preview cannot be promoted to production')).toBeInTheDocument()
  })

  it('can be cancelled', async () => {
    const { calls } = setup()
    const rows = await screen.findAllByTestId('history-row')
    await userEvent.click(within(rows[2]).getByRole('button', { name: /Promote/ }))
    await userEvent.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Cancel' }))
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument()
    expect(calls.some((c) => c.method === 'POST')).toBe(false)
  })
})

describe('when the lists cannot be fetched', () => {
  it('says so in each card, once in a toast each', async () => {
    setup({ 'GET /api/deployments': fail(500), 'GET /api/projects/p1/previews': fail(500) })
    expect(await screen.findByText('The production deployment could not be loaded.', undefined, { timeout: 5000 })).toBeInTheDocument()
    expect(screen.getByText('The deployment history could not be loaded.')).toBeInTheDocument()
    expect(await screen.findByText('The previews could not be loaded.')).toBeInTheDocument()
    expect(await screen.findByText('Failed to fetch previews')).toBeInTheDocument()
    expect(await screen.findByText('Failed to fetch deployments')).toBeInTheDocument()
  })
})
