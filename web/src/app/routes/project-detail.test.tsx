import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { HIDDEN_FROM_DISCOVER, SHOWN_IN_DISCOVER } from '@/features/projects/api/update-project'
import { EDIT_TIPS, KEEP_DEV_DEPENDENCIES, KEEP_DEV_DEPENDENCIES_HINT } from '@/features/projects/components/edit-project-form'
import { showInDiscoverHint } from '@/features/projects/components/show-in-discover'
import { makeProject } from '@/test/fixtures'
import { fail, mockApi, ok, renderApp, testUser, unreachable, type FakeHandler } from '@/test/utils'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

function setup(path: string, handlers: Record<string, FakeHandler> = {}) {
  const api = mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/projects/p1': ok({ project: makeProject() }),
    'GET /api/projects': ok({ projects: [] }),
    ...handlers,
  })
  return { ...api, ...renderApp(path, { user: testUser }) }
}

describe('projects list', () => {
  it('shows the empty state', async () => {
    setup('/projects')
    expect(await screen.findByText('No projects yet')).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Create Your First Project' })).toHaveAttribute('href', '/projects/new')
  })

  it('says when the projects cannot be fetched', async () => {
    setup('/projects', { 'GET /api/projects': fail(500) })
    expect(await screen.findByText('Failed to fetch projects', {}, { timeout: 4000 })).toBeInTheDocument()
    expect(screen.getByText('No projects yet')).toBeInTheDocument()
  })

  it('shows a card per project', async () => {
    setup('/projects', { 'GET /api/projects': ok({ projects: [makeProject(), makeProject({ _id: 'p2', name: 'Other' })] }) })
    expect(await screen.findAllByTestId('project-card')).toHaveLength(2)
  })
})

describe('project detail', () => {
  it('shows every section', async () => {
    setup('/projects/p1')
    expect(await screen.findByRole('heading', { level: 1, name: 'Portfolio Site' })).toBeInTheDocument()
    expect(screen.getByText('My personal portfolio')).toBeInTheDocument()
    for (const name of ['Sync', 'Deploy', 'Delete']) expect(screen.getByRole('button', { name })).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Edit' })).toHaveAttribute('href', '/projects/p1/edit')
    expect(screen.getByText('Mar 4, 2026')).toBeInTheDocument()
    expect(screen.getByText('Public')).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'View repository' })).toHaveAttribute('href', 'https://github.com/alice/site')
    expect(screen.getAllByText('Not specified')).toHaveLength(2)
    expect(screen.getByText('abcdef1')).toBeInTheDocument()
    expect(screen.getByText('Add footer')).toBeInTheDocument()
    const recent = screen.getByRole('heading', { name: 'Recent Deployments' }).closest('div')!.parentElement!
    expect(within(recent).getByRole('link', { name: 'View' })).toHaveAttribute('href', '/deployments/d1')
  })

  it('falls back to "No description" and "Never"', async () => {
    const p = makeProject()
    setup('/projects/p1', {
      'GET /api/projects/p1': ok({ project: { ...p, description: '', repository: { ...p.repository, lastCommit: null } } }),
    })
    expect(await screen.findByText('No description')).toBeInTheDocument()
    expect(screen.getByText('Never')).toBeInTheDocument()
  })

  it('turns "Show in Discover" off and on at once', async () => {
    // The server keeps the setting: the refetch after each change reads it back.
    let shown = true
    const { calls } = setup('/projects/p1', {
      'GET /api/projects/p1': () => ok({ project: makeProject({ showInDiscover: shown }) }),
      'PUT /api/projects/p1': (req) => {
        shown = (req.body as { showInDiscover: boolean }).showInDiscover
        return ok({ project: makeProject({ showInDiscover: shown }) })
      },
    })
    const toggle = await screen.findByRole('switch', { name: 'Show in Discover' })
    expect(toggle).toHaveAttribute('aria-checked', 'true')
    expect(toggle).toHaveAccessibleDescription(showInDiscoverHint(false))
    await userEvent.click(toggle)
    expect(await screen.findByText(HIDDEN_FROM_DISCOVER)).toBeInTheDocument()
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([{ showInDiscover: false }])
    await waitFor(() => expect(toggle).toHaveAttribute('aria-checked', 'false'))
    await userEvent.click(toggle)
    expect(await screen.findByText(SHOWN_IN_DISCOVER)).toBeInTheDocument()
    await waitFor(() => expect(toggle).toHaveAttribute('aria-checked', 'true'))
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([
      { showInDiscover: false },
      { showInDiscover: true },
    ])
  })

  it('starts "Show in Discover" off for a private repository', async () => {
    const p = makeProject()
    setup('/projects/p1', {
      'GET /api/projects/p1': ok({ project: { ...p, showInDiscover: false, repository: { ...p.repository, private: true } } }),
    })
    const toggle = await screen.findByRole('switch', { name: 'Show in Discover' })
    expect(toggle).toHaveAttribute('aria-checked', 'false')
    expect(toggle).toHaveAccessibleDescription(showInDiscoverHint(true))
  })

  it('says when "Show in Discover" cannot be changed, and keeps the setting', async () => {
    setup('/projects/p1', {
      'GET /api/projects/p1': ok({ project: makeProject({ showInDiscover: true }) }),
      'PUT /api/projects/p1': fail(500),
    })
    const toggle = await screen.findByRole('switch', { name: 'Show in Discover' })
    await userEvent.click(toggle)
    expect(await screen.findByText('Failed to update project')).toBeInTheDocument()
    expect(toggle).toHaveAttribute('aria-checked', 'true')
  })

  it('shows "Project not found"', async () => {
    setup('/projects/p1', { 'GET /api/projects/p1': fail(404, 'Project not found') })
    expect(await screen.findByRole('heading', { level: 1, name: 'Project not found' })).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Back to Projects' })).toHaveAttribute('href', '/projects')
    expect(await screen.findByText('Failed to fetch project details')).toBeInTheDocument()
    expect(screen.queryByRole('button', { name: 'Retry' })).not.toBeInTheDocument()
  })

  it('offers a retry, not "not found", when the server fails', async () => {
    setup('/projects/p1', { 'GET /api/projects/p1': fail(500, 'Internal error.') })
    const alert = await screen.findByRole('alert')
    expect(within(alert).getByRole('heading', { level: 1, name: 'Could not load this project' })).toBeInTheDocument()
    expect(alert).toHaveTextContent('Internal error.')
    expect(within(alert).getByRole('button', { name: 'Retry' })).toBeEnabled()
    expect(within(alert).getByRole('link', { name: 'Back to Projects' })).toHaveAttribute('href', '/projects')
    expect(screen.queryByText('Project not found')).not.toBeInTheDocument()
    expect(await screen.findAllByText('Failed to fetch project details')).toHaveLength(1)
  })

  it('offers a retry when the server cannot be reached', async () => {
    setup('/projects/p1', { 'GET /api/projects/p1': unreachable })
    const alert = await screen.findByRole('alert')
    expect(within(alert).getByRole('heading', { level: 1, name: 'Could not load this project' })).toBeInTheDocument()
    expect(alert).toHaveTextContent('Could not reach the server. Check your connection and try again.')
    expect(await screen.findByText('Failed to fetch project details')).toBeInTheDocument()
  })

  it('fetches again on Retry, saying so while it runs', async () => {
    let answers = 0
    const { calls } = setup('/projects/p1', {
      'GET /api/projects/p1': () => (++answers <= 2 ? fail(500) : { ...ok({ project: makeProject() }), delay: 1500 }),
    })
    const alert = await screen.findByRole('alert')
    expect(alert).toHaveTextContent('The server answered with status 500.')
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }))
    const busy = await within(alert).findByRole('button', { name: 'Retrying...' })
    expect(busy).toBeDisabled()
    expect(busy).toHaveAttribute('aria-busy', 'true')
    expect(alert).toHaveTextContent('The server answered with status 500.')
    expect(await screen.findByRole('heading', { level: 1, name: 'Portfolio Site' })).toBeInTheDocument()
    expect(calls.filter((c) => c.path === '/api/projects/p1')).toHaveLength(3)
  })

  it('syncs', async () => {
    setup('/projects/p1', { 'POST /api/projects/p1/sync': ok({ project: makeProject() }) })
    await userEvent.click(await screen.findByRole('button', { name: 'Sync' }))
    expect(await screen.findByText('Project synced successfully')).toBeInTheDocument()
  })

  it('deploys version 1.0.0 and opens the deployment after a second', async () => {
    const { calls, router } = setup('/projects/p1', {
      'POST /api/deployments': { status: 201, body: { success: true, data: { deployment: { _id: 'd7' } } } },
    })
    await userEvent.click(await screen.findByRole('button', { name: 'Deploy' }))
    expect(await screen.findByText('Deployment started successfully! Redirecting to deployment...')).toBeInTheDocument()
    expect(calls.find((c) => c.method === 'POST' && c.path === '/api/deployments')?.body).toEqual({ projectId: 'p1', version: '1.0.0' })
    expect(router.state.location.pathname).toBe('/projects/p1')
    await waitFor(() => expect(router.state.location.pathname).toBe('/deployments/d7'), { timeout: 3000 })
  })

  it('shows the plan-limit message when a deploy is refused', async () => {
    setup('/projects/p1', { 'POST /api/deployments': fail(403, 'Your Free plan allows 5 live deployments') })
    await userEvent.click(await screen.findByRole('button', { name: 'Deploy' }))
    expect(await screen.findByText('Your Free plan allows 5 live deployments')).toBeInTheDocument()
  })

  it('deletes after the confirmation and goes back to the list', async () => {
    const { router } = setup('/projects/p1', { 'DELETE /api/projects/p1': ok({ deleted: true }) })
    await userEvent.click(await screen.findByRole('button', { name: 'Delete' }))
    const dialog = screen.getByRole('dialog')
    expect(dialog).toHaveTextContent('Are you sure you want to delete this project? This action cannot be undone.')
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete' }))
    expect(await screen.findByText('Project deleted successfully. Redirecting to projects...')).toBeInTheDocument()
    await waitFor(() => expect(router.state.location.pathname).toBe('/projects'), { timeout: 3000 })
  })
})

describe('project edit', () => {
  it('saves name, description, branch and build settings', async () => {
    const { calls, router } = setup('/projects/p1/edit', { 'PUT /api/projects/p1': ok({ project: makeProject() }) })
    const name = await screen.findByLabelText('Project name')
    expect(name).toBeRequired()
    for (const tip of EDIT_TIPS) expect(screen.getByText(tip)).toBeInTheDocument()
    expect(EDIT_TIPS.join(' ')).toMatch(/static sites.*dist, build, \.next and public.*yarn\.lock/)
    await userEvent.clear(name)
    await userEvent.type(name, 'Renamed')
    await userEvent.type(screen.getByLabelText('Build command'), 'npm run build')
    await userEvent.click(screen.getByRole('button', { name: 'Save Changes' }))
    expect(await screen.findByText('Project updated successfully!')).toBeInTheDocument()
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      name: 'Renamed',
      description: 'My personal portfolio',
      branch: 'main',
      buildConfig: {
        installCommand: '',
        buildCommand: 'npm run build',
        outputDirectory: '.',
        startCommand: '',
        keepDevDependencies: false,
      },
      showInDiscover: true,
    })
    await waitFor(() => expect(router.state.location.pathname).toBe('/projects/p1'))
  })

  it('saves "Keep dev dependencies" in the build settings', async () => {
    const { calls } = setup('/projects/p1/edit', { 'PUT /api/projects/p1': ok({ project: makeProject() }) })
    const toggle = await screen.findByRole('switch', { name: KEEP_DEV_DEPENDENCIES })
    expect(toggle).toHaveAttribute('aria-checked', 'false')
    expect(toggle).toHaveAccessibleDescription(KEEP_DEV_DEPENDENCIES_HINT)
    await userEvent.click(toggle)
    await userEvent.click(screen.getByRole('button', { name: 'Save Changes' }))
    expect(await screen.findByText('Project updated successfully!')).toBeInTheDocument()
    expect(calls.find((c) => c.method === 'PUT')?.body).toMatchObject({ buildConfig: { keepDevDependencies: true } })
  })

  it('saves "Show in Discover" with the other settings', async () => {
    const { calls } = setup('/projects/p1/edit', {
      'GET /api/projects/p1': ok({ project: makeProject({ showInDiscover: true }) }),
      'PUT /api/projects/p1': ok({ project: makeProject({ showInDiscover: false }) }),
    })
    const toggle = await screen.findByRole('switch', { name: 'Show in Discover' })
    expect(toggle).toHaveAttribute('aria-checked', 'true')
    expect(toggle).toHaveAccessibleDescription(showInDiscoverHint(false))
    await userEvent.click(toggle)
    expect(toggle).toHaveAttribute('aria-checked', 'false')
    expect(calls.some((c) => c.method === 'PUT')).toBe(false)
    await userEvent.click(screen.getByRole('button', { name: 'Save Changes' }))
    expect(await screen.findByText('Project updated successfully!')).toBeInTheDocument()
    expect(calls.find((c) => c.method === 'PUT')?.body).toMatchObject({ name: 'Portfolio Site', showInDiscover: false })
  })

  it('shows the server message when saving fails', async () => {
    setup('/projects/p1/edit', { 'PUT /api/projects/p1': fail(400, 'Output directory must stay inside the repository') })
    await userEvent.click(await screen.findByRole('button', { name: 'Save Changes' }))
    expect(await screen.findByText('Output directory must stay inside the repository')).toBeInTheDocument()
  })

  it('goes to /projects when the project cannot be loaded', async () => {
    const { router } = setup('/projects/p1/edit', { 'GET /api/projects/p1': fail(404, 'Project not found') })
    await waitFor(() => expect(router.state.location.pathname).toBe('/projects'))
  })
})
