import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { makeDeployment, makeLog } from '@/test/fixtures'
import { fail, mockApi, ok, renderApp, testUser, unreachable, type FakeHandler } from '@/test/utils'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

function setup(handlers: Record<string, FakeHandler> = {}) {
  const api = mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/deployments/d1': ok({ deployment: makeDeployment() }),
    'GET /api/deployments/d1/logs': ok({ logs: [makeLog(1)], total: 1 }),
    'GET /api/deployments': ok({ deployments: [] }),
    ...handlers,
  })
  return { ...api, ...renderApp('/deployments/d1', { user: testUser }) }
}

describe('deployment detail', () => {
  it('shows the header, cards and sections with their units and defaults', async () => {
    setup({
      'GET /api/deployments/d1': ok({
        deployment: makeDeployment({
          version: '',
          metadata: { commitHash: 'abcdef1234567890', branch: 'main', repository: { fullName: 'alice/site' } },
          buildLogs: [
            { level: 'info', timestamp: '2026-03-05T09:00:01Z', message: 'Cloning' },
            { level: 'success', timestamp: '2026-03-05T09:00:02Z', message: 'Published' },
          ],
          environment: {
            variables: [
              { key: 'API_URL', value: 'https://api.example.com', isSecret: false },
              { key: 'TOKEN', value: 'hunter2', isSecret: true },
            ],
          },
        }),
      }),
    })
    expect(await screen.findByRole('heading', { level: 1, name: 'Portfolio Site Deployment' })).toBeInTheDocument()
    expect(screen.getByText('Version 1.0.0')).toBeInTheDocument()
    for (const name of ['Refresh', 'Stop', 'Delete']) expect(screen.getByRole('button', { name })).toBeInTheDocument()
    expect(screen.queryByRole('button', { name: 'Restart' })).not.toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Visit Site' })).toHaveAttribute('href', 'http://portfolio-site.localhost:8080')
    expect(screen.getAllByRole('link', { name: /Back to Deployments/ })[0]).toHaveAttribute('href', '/deployments')
    expect(screen.getAllByText('12s').length).toBeGreaterThan(0)
    expect(screen.getByText('3 KB')).toBeInTheDocument()
    // No trigger recorded: a manual production deployment, said in the header and the commit card.
    expect(screen.getByTestId('deployment-trigger')).toHaveTextContent('Manual')
    expect(screen.getAllByText('Manual')).toHaveLength(2)
    expect(screen.getAllByText('Production').length).toBeGreaterThan(0)
    expect(screen.getByText('abcdef1')).toBeInTheDocument()
    expect(screen.getByText('2 entries')).toBeInTheDocument()
    expect(screen.getByText('https://api.example.com')).toBeInTheDocument()
    expect(screen.getByText('••••••••')).toBeInTheDocument()
    expect(screen.queryByText('hunter2')).not.toBeInTheDocument()
    expect(await screen.findByText('1 of 1 log entries')).toBeInTheDocument()
  })

  it('shows a preview of a pull request with its badge, branch and trigger', async () => {
    setup({
      'GET /api/deployments/d1': ok({
        deployment: makeDeployment({
          target: 'preview',
          url: 'http://portfolio-site--pr-12.localhost:8080',
          metadata: { commitHash: 'abcdef1234567890', branch: 'fix-nav', trigger: 'pull_request', pullRequest: 12, author: 'bob' },
        }),
      }),
    })
    expect(await screen.findByRole('heading', { level: 1, name: 'Portfolio Site Deployment' })).toBeInTheDocument()
    expect(screen.getByTestId('deployment-trigger')).toHaveTextContent('Pull request #12')
    expect(screen.getAllByText('Preview')).toHaveLength(2)
    expect(screen.getAllByText('fix-nav').length).toBeGreaterThan(0)
  })

  it('says Rollback for a promoted deployment', async () => {
    setup({
      'GET /api/deployments/d1': ok({
        deployment: makeDeployment({
          promotedAt: '2026-03-06T10:00:00Z',
          metadata: { commitHash: 'abcdef1234567890', branch: 'main', trigger: 'push', author: 'Alice' },
        }),
      }),
    })
    expect(await screen.findByTestId('deployment-trigger')).toHaveTextContent('Rollback')
    expect(screen.getByText('Mar 6, 2026, 10:00')).toBeInTheDocument()
  })

  it('hides and shows the logs panel', async () => {
    setup()
    const toggle = await screen.findByRole('button', { name: 'Hide Deployment Logs' })
    expect(screen.getByRole('log')).toBeInTheDocument()
    await userEvent.click(toggle)
    expect(screen.queryByRole('log')).not.toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Show Deployment Logs' }))
    expect(screen.getByRole('log')).toBeInTheDocument()
  })

  it('says why a failed deployment failed and offers no stop or visit', async () => {
    setup({
      'GET /api/deployments/d1': ok({
        deployment: makeDeployment({ status: 'failed', error: "Output directory 'dist' was not found after the build" }),
      }),
    })
    const alert = await screen.findByRole('alert')
    expect(alert).toHaveTextContent("Output directory 'dist' was not found after the build")
    expect(screen.queryByRole('button', { name: 'Stop' })).not.toBeInTheDocument()
    expect(screen.queryByRole('link', { name: 'Visit Site' })).not.toBeInTheDocument()
  })

  it('restarts a stopped deployment by its id', async () => {
    const { calls } = setup({
      'GET /api/deployments/d1': ok({ deployment: makeDeployment({ status: 'stopped' }) }),
      'POST /api/deployments/hosting/restart/portfolio-site': ok({}),
    })
    await userEvent.click(await screen.findByRole('button', { name: 'Restart' }))
    expect(await screen.findByText('Deployment restarted successfully')).toBeInTheDocument()
    expect(calls.find((c) => c.path.includes('/restart/'))?.body).toEqual({ deploymentId: 'd1' })
  })

  it('deletes and goes back to the list', async () => {
    const { router } = setup({ 'DELETE /api/deployments/d1': ok({ deleted: true }) })
    await userEvent.click(await screen.findByRole('button', { name: 'Delete' }))
    await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }))
    expect(await screen.findByText('Deployment deleted successfully')).toBeInTheDocument()
    await waitFor(() => expect(router.state.location.pathname).toBe('/deployments'))
  })

  it('shows "Deployment not found"', async () => {
    setup({ 'GET /api/deployments/d1': fail(404, 'Deployment not found') })
    expect(await screen.findByRole('heading', { level: 1, name: 'Deployment not found' })).toBeInTheDocument()
    expect(await screen.findByText('Failed to fetch deployment details')).toBeInTheDocument()
    expect(screen.queryByRole('button', { name: 'Retry' })).not.toBeInTheDocument()
  })

  it('offers a retry, not "not found", when the server fails', async () => {
    setup({ 'GET /api/deployments/d1': fail(500, 'Internal error.') })
    const alert = await screen.findByRole('alert')
    expect(within(alert).getByRole('heading', { level: 1, name: 'Could not load this deployment' })).toBeInTheDocument()
    expect(alert).toHaveTextContent('Internal error.')
    expect(within(alert).getByRole('button', { name: 'Retry' })).toBeEnabled()
    expect(within(alert).getByRole('link', { name: 'Back to Deployments' })).toHaveAttribute('href', '/deployments')
    expect(screen.queryByText('Deployment not found')).not.toBeInTheDocument()
    expect(await screen.findAllByText('Failed to fetch deployment details')).toHaveLength(1)
  })

  it('offers a retry when the server cannot be reached', async () => {
    setup({ 'GET /api/deployments/d1': unreachable })
    const alert = await screen.findByRole('alert')
    expect(within(alert).getByRole('heading', { level: 1, name: 'Could not load this deployment' })).toBeInTheDocument()
    expect(alert).toHaveTextContent('Could not reach the server. Check your connection and try again.')
    expect(await screen.findByText('Failed to fetch deployment details')).toBeInTheDocument()
  })

  it('fetches again on Retry, saying so while it runs', async () => {
    let answers = 0
    const { calls } = setup({
      'GET /api/deployments/d1': () =>
        ++answers <= 2 ? unreachable : { ...ok({ deployment: makeDeployment() }), delay: 1500 },
    })
    const alert = await screen.findByRole('alert')
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }))
    const busy = await within(alert).findByRole('button', { name: 'Retrying...' })
    expect(busy).toBeDisabled()
    expect(await screen.findByRole('heading', { level: 1, name: 'Portfolio Site Deployment' })).toBeInTheDocument()
    expect(calls.filter((c) => c.path === '/api/deployments/d1')).toHaveLength(3)
  })
})

describe('why it failed', () => {
  const diagnosis = {
    title: 'The build could not download the font “Playfair Display” from Google Fonts',
    detail:
      'Your code is fine: next/font/google downloads the fonts while the site builds. Load them with `next/font/local` instead.',
    lines: [2],
  }

  it('shows the card at the top and marks the lines that gave it away', async () => {
    setup({
      'GET /api/deployments/d1': ok({
        deployment: makeDeployment({ status: 'failed', error: 'npm run build exited with code 1', diagnosis }),
      }),
      'GET /api/deployments/d1/logs': ok({
        logs: [
          makeLog(1, { message: 'Building: npm run build' }),
          makeLog(2, { level: 'error', message: 'Failed to fetch `Playfair Display` from Google Fonts.' }),
          makeLog(3, { level: 'error', message: 'npm run build exited with code 1' }),
        ],
        total: 3,
      }),
    })
    const card = await screen.findByRole('alert', { name: 'Why it failed' })
    expect(within(card).getByText(diagnosis.title)).toBeInTheDocument()
    expect(within(card).getByText('next/font/local').tagName).toBe('CODE')
    expect(within(card).getByText('npm run build exited with code 1')).toBeInTheDocument()
    expect(within(card).getByText(/1 line highlighted in the logs below/)).toBeInTheDocument()
    expect(screen.queryByText('This deployment failed')).not.toBeInTheDocument()
    const marked = await screen.findByLabelText(/^Cause of the failure: Failed to fetch/)
    expect(marked).toHaveAttribute('data-highlighted', 'true')
    expect(document.querySelectorAll('[data-highlighted]')).toHaveLength(1)
  })

  it('keeps the plain failure box without a diagnosis', async () => {
    setup({ 'GET /api/deployments/d1': ok({ deployment: makeDeployment({ status: 'failed', error: 'Build failed' }) }) })
    expect(await screen.findByText('This deployment failed')).toBeInTheDocument()
    expect(screen.queryByRole('alert', { name: 'Why it failed' })).not.toBeInTheDocument()
  })

  it('redeploys without cache', async () => {
    const { calls } = setup({
      'GET /api/deployments/d1': ok({ deployment: makeDeployment({ status: 'failed', diagnosis }) }),
      'POST /api/deployments/d1/redeploy': ok({ deployment: makeDeployment({ _id: 'd2', status: 'pending' }) }),
      'GET /api/deployments/d2': ok({ deployment: makeDeployment({ _id: 'd2', status: 'pending' }) }),
      'GET /api/deployments/d2/logs': ok({ logs: [], total: 0 }),
    })
    await userEvent.click(await screen.findByRole('button', { name: 'Redeploy without cache' }))
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'POST' && c.path === '/api/deployments/d1/redeploy')?.body).toEqual({
        noCache: true,
      }),
    )
  })
})
