import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { makeDeployment } from '@/test/fixtures'
import { mockApi, ok, renderApp, testUser } from '@/test/utils'
import type { Deployment } from '../types'

const list: Deployment[] = [
  makeDeployment({ _id: 'a', status: 'live', project: { name: 'Alpha' } }),
  makeDeployment({ _id: 'b', status: 'building', project: { name: 'Bravo' }, url: 'http://b.localhost' }),
  makeDeployment({ _id: 'c', status: 'deploying', project: { name: 'Charlie' } }),
  makeDeployment({ _id: 'd', status: 'failed', project: { name: 'Delta' } }),
  makeDeployment({ _id: 'e', status: 'pending', project: { name: 'Echo' } }),
  makeDeployment({
    _id: 'f',
    status: 'stopped',
    project: null,
    subdomain: 'foxtrot',
    buildInfo: {},
    metadata: { commitHash: '0123456789abcdef', commitMessage: 'Initial commit', branch: 'dev' },
  }),
]

function setup(extra: Record<string, ReturnType<typeof ok>> = {}) {
  const api = mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/deployments': ok({ deployments: list }),
    ...extra,
  })
  renderApp('/deployments', { user: testUser })
  return api
}

const card = (name: string) => screen.getByRole('heading', { name }).closest('[data-testid="deployment-card"]') as HTMLElement
const buttonsOf = (name: string) =>
  within(card(name))
    .getAllByRole('button')
    .concat(within(card(name)).getAllByRole('link'))
    .map((b) => b.textContent?.trim())
    .sort()

// The notification bell's fetch fails here (404); that is only logged.
beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

describe('deployments list', () => {
  it('filters by the status tabs', async () => {
    setup()
    expect(await screen.findByRole('heading', { name: 'Alpha' })).toBeInTheDocument()
    const tabs = screen.getByRole('group', { name: 'Filter deployments by status' })
    expect(within(tabs).getAllByRole('button').map((b) => b.textContent)).toEqual([
      'All',
      'Live',
      'Building',
      'Deploying',
      'Failed',
      'Pending',
    ])
    expect(screen.getAllByTestId('deployment-card')).toHaveLength(6)

    for (const [tab, name] of [
      ['Live', 'Alpha'],
      ['Building', 'Bravo'],
      ['Deploying', 'Charlie'],
      ['Failed', 'Delta'],
      ['Pending', 'Echo'],
    ]) {
      await userEvent.click(within(tabs).getByRole('button', { name: tab }))
      expect(within(tabs).getByRole('button', { name: tab })).toHaveAttribute('aria-pressed', 'true')
      expect(screen.getAllByTestId('deployment-card')).toHaveLength(1)
      expect(screen.getByRole('heading', { name })).toBeInTheDocument()
    }
  })

  it('shows the actions each status allows', async () => {
    setup()
    await screen.findByRole('heading', { name: 'Alpha' })
    expect(buttonsOf('Alpha')).toEqual(['Delete', 'Stop', 'View Details', 'Visit Site'])
    expect(buttonsOf('Bravo')).toEqual(['Delete', 'Stop', 'View Details'])
    expect(buttonsOf('Charlie')).toEqual(['Delete', 'Stop', 'View Details'])
    expect(buttonsOf('Delta')).toEqual(['Delete', 'View Details'])
    expect(buttonsOf('Echo')).toEqual(['Delete', 'View Details'])
    expect(buttonsOf('Unknown Project')).toEqual(['Delete', 'Restart', 'View Details'])
    expect(within(card('Alpha')).getByRole('link', { name: 'Visit Site' })).toHaveAttribute('target', '_blank')
  })

  it('says when a stopped deployment lost its files, and offers no restart', async () => {
    setup({
      'GET /api/deployments': ok({
        deployments: [
          makeDeployment({ _id: 'g', status: 'stopped', project: { name: 'Golf' }, prunedAt: '2026-03-06T09:00:00Z' }),
          makeDeployment({ _id: 'h', status: 'stopped', project: { name: 'Hotel' }, prunedAt: null }),
        ],
      }),
    })
    await screen.findByRole('heading', { name: 'Golf' })
    expect(within(card('Golf')).getByText('Files removed to save space')).toBeInTheDocument()
    expect(buttonsOf('Golf')).toEqual(['Delete', 'View Details'])
    expect(within(card('Hotel')).queryByText('Files removed to save space')).not.toBeInTheDocument()
    expect(buttonsOf('Hotel')).toEqual(['Delete', 'Restart', 'View Details'])
  })

  it('shows the target, the branch and the trigger of each', async () => {
    setup({
      'GET /api/deployments': ok({
        deployments: [
          makeDeployment({ _id: 'p', target: 'production', project: { name: 'Pushed' }, metadata: { trigger: 'push', author: 'Maya Chen', branch: 'main' } }),
          makeDeployment({
            _id: 'q',
            target: 'preview',
            project: { name: 'Previewed' },
            metadata: { trigger: 'pull_request', pullRequest: 12, branch: 'fix-nav' },
          }),
          makeDeployment({ _id: 'r', project: { name: 'Rolled back' }, promotedAt: '2026-03-06T10:00:00Z', metadata: { trigger: 'manual' } }),
          makeDeployment({ _id: 's', project: { name: 'Hooked' }, metadata: { trigger: 'hook', branch: 'main' } }),
        ],
      }),
    })
    await screen.findByRole('heading', { name: 'Pushed' })
    const trigger = (name: string) => within(card(name)).getByTestId('deployment-trigger').textContent
    expect(trigger('Pushed')).toBe('Pushed by Maya Chen')
    expect(trigger('Previewed')).toBe('Pull request #12')
    expect(trigger('Rolled back')).toBe('Rollback')
    expect(trigger('Hooked')).toBe('Deploy hook')
    expect(within(card('Pushed')).getByText('Production')).toBeInTheDocument()
    expect(within(card('Pushed')).getByText('main')).toBeInTheDocument()
    expect(within(card('Previewed')).getByText('Preview')).toBeInTheDocument()
    expect(within(card('Previewed')).getByText('fix-nav')).toBeInTheDocument()
  })

  it('shows defaults and the commit row', async () => {
    setup()
    const unknown = await screen.findByRole('heading', { name: 'Unknown Project' })
    const c = within(unknown.closest('[data-testid="deployment-card"]') as HTMLElement)
    expect(c.getByText('npm run build')).toBeInTheDocument()
    expect(c.getByText('dist')).toBeInTheDocument()
    expect(c.getByText('0123456')).toBeInTheDocument()
    expect(c.getByText('Initial commit')).toBeInTheDocument()
    expect(c.getByText('dev')).toBeInTheDocument()
    expect(within(card('Alpha')).getByText('12s')).toBeInTheDocument()
  })

  it('stops with the deployment id, then deletes after a confirmation (stopping first)', async () => {
    const { calls } = setup({
      'POST /api/deployments/hosting/stop/portfolio-site': ok({}),
      'DELETE /api/deployments/a': ok({ deleted: true }),
    })
    await screen.findByRole('heading', { name: 'Alpha' })
    await userEvent.click(within(card('Alpha')).getByRole('button', { name: 'Stop' }))
    expect(await screen.findByText('Deployment stopped successfully')).toBeInTheDocument()
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ deploymentId: 'a' })

    await userEvent.click(within(card('Alpha')).getByRole('button', { name: 'Delete' }))
    const dialog = screen.getByRole('dialog')
    expect(dialog).toHaveTextContent(
      'Are you sure you want to delete this deployment? This action cannot be undone and will remove all deployment data, files, and the application link.',
    )
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete' }))
    expect(await screen.findByText('Deployment deleted successfully')).toBeInTheDocument()
    const order = calls.filter((c) => c.method !== 'GET').map((c) => `${c.method} ${c.path}`)
    expect(order.slice(-2)).toEqual([
      'POST /api/deployments/hosting/stop/portfolio-site',
      'DELETE /api/deployments/a',
    ])
  })

  it('deletes even when the stop fails, and says when things fail', async () => {
    const { calls } = setup({ 'DELETE /api/deployments/d': ok({ deleted: true }) })
    await screen.findByRole('heading', { name: 'Delta' })
    await userEvent.click(within(card('Unknown Project')).getByRole('button', { name: 'Restart' }))
    expect(await screen.findByText('Failed to restart deployment')).toBeInTheDocument()
    await userEvent.click(within(card('Delta')).getByRole('button', { name: 'Delete' }))
    await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }))
    expect(await screen.findByText('Deployment deleted successfully')).toBeInTheDocument()
    await waitFor(() => expect(calls.some((c) => c.method === 'DELETE' && c.path === '/api/deployments/d')).toBe(true))
  })

  it('shows the empty state and the fetch failure', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }) })
    renderApp('/deployments', { user: testUser })
    expect(await screen.findByText('Failed to fetch deployments', {}, { timeout: 4000 })).toBeInTheDocument()
    expect(screen.getByText('No deployments found')).toBeInTheDocument()
  })
})
