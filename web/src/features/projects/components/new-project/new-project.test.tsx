import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { makeLookup, makeProject } from '@/test/fixtures'
import { fail, mockApi, ok, renderApp, testUser, type FakeHandler } from '@/test/utils'
import type { User } from '@/types/api'
import { newProjectError } from '../../schemas'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

function setup(handlers: Record<string, FakeHandler> = {}, user: User = testUser) {
  const api = mockApi({ 'GET /api/auth/me': ok({ user }), ...handlers })
  const view = renderApp('/projects/new', { user })
  return { ...api, ...view }
}

async function openPublic() {
  await userEvent.click(await screen.findByRole('button', { name: 'Any Public Repository' }))
}

const load = () => userEvent.click(screen.getByRole('button', { name: 'Load Repository' }))

describe('new project', () => {
  it('asks for a GitHub account on the GitHub source when none is connected', async () => {
    setup()
    expect(await screen.findByRole('heading', { name: 'GitHub Account Required' })).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Connect GitHub Account' })).toHaveAttribute('href', '/github-integration')
    await userEvent.click(screen.getByRole('button', { name: 'Deploy Any Public Repository' }))
    expect(screen.getByLabelText('Repository URL')).toBeInTheDocument()
  })

  it('needs a repository URL', async () => {
    const { calls } = setup()
    await openPublic()
    await load()
    expect(screen.getByLabelText('Repository URL')).toHaveAccessibleDescription('Please enter a repository URL')
    expect(await screen.findByRole('status')).toHaveTextContent('Please enter a repository URL')
    expect(calls.some((c) => c.path === '/api/projects/public-repo')).toBe(false)
  })

  it.each([
    [fail(404, 'Repository not found: check the URL'), 'Repository not found: check the URL'],
    [fail(500), "Failed to fetch repository. Make sure it's a public GitHub repository."],
  ])('shows the server message, else the fallback, when loading fails', async (answer, message) => {
    setup({ 'POST /api/projects/public-repo': answer })
    await openPublic()
    await userEvent.type(screen.getByLabelText('Repository URL'), 'https://github.com/alice/nope')
    await load()
    expect(await screen.findByText(message)).toBeInTheDocument()
  })

  it('loads a repository, prefills the form, and needs a name', async () => {
    const { calls } = setup({
      'POST /api/projects/public-repo': { ...ok(makeLookup()), delay: 50 },
    })
    await openPublic()
    await userEvent.type(screen.getByLabelText('Repository URL'), 'https://github.com/alice/site')
    await load()
    expect(screen.getByText('Detecting...')).toBeInTheDocument()
    expect(await screen.findByText('Repository alice/site loaded successfully')).toBeInTheDocument()
    expect(calls.find((c) => c.path === '/api/projects/public-repo')?.body).toEqual({
      repoUrl: 'https://github.com/alice/site',
    })
    expect(screen.getByTestId('framework')).toHaveTextContent('Static')
    expect(screen.getByLabelText('Project name')).toHaveValue('site')
    expect(screen.getByLabelText('Branch')).toHaveValue('main')
    expect(screen.getByLabelText('Output directory')).toHaveValue('.')
    expect(screen.getByLabelText('Build command')).toHaveAttribute('placeholder', 'No build step')

    await userEvent.clear(screen.getByLabelText('Project name'))
    await userEvent.click(screen.getByRole('button', { name: 'Create & Deploy Project' }))
    expect(screen.getByLabelText('Project name')).toHaveAccessibleDescription('Project name is required')
    expect(calls.some((c) => c.path === '/api/projects/public')).toBe(false)
  })

  it('uses the SPEC defaults when the lookup detected nothing', async () => {
    setup({
      'POST /api/projects/public-repo': ok(
        makeLookup({ framework: '', buildConfig: { installCommand: '', buildCommand: '', outputDirectory: '' } }),
      ),
    })
    await openPublic()
    await userEvent.type(screen.getByLabelText('Repository URL'), 'https://github.com/alice/site')
    await load()
    expect(await screen.findByText('Not detected')).toBeInTheDocument()
    expect(screen.getByLabelText('Install command')).toHaveValue('npm install')
    expect(screen.getByLabelText('Output directory')).toHaveValue('dist')
    expect(screen.getByLabelText('Build command')).toHaveAttribute('placeholder', 'npm run build')
  })

  it('warns about a private repository, and Change goes back', async () => {
    const lookup = makeLookup()
    setup({ 'POST /api/projects/public-repo': ok({ ...lookup, repository: { ...lookup.repository, private: true } }) })
    await openPublic()
    await userEvent.type(screen.getByLabelText('Repository URL'), 'https://github.com/alice/site')
    await load()
    expect(await screen.findByRole('note')).toHaveTextContent(/private/)
    await userEvent.click(screen.getByRole('button', { name: 'Change' }))
    expect(screen.getByLabelText('Repository URL')).toBeInTheDocument()
  })

  it('creates the project with exactly the API fields, deploys it and opens the deployment', async () => {
    const { calls, router } = setup({
      'POST /api/projects/public-repo': ok(makeLookup()),
      'POST /api/projects/public': { status: 201, body: { success: true, data: { project: makeProject({ _id: 'p9' }) } } },
      'POST /api/deployments': { status: 201, body: { success: true, data: { deployment: { _id: 'd9' } } } },
    })
    await openPublic()
    await userEvent.type(screen.getByLabelText('Repository URL'), 'https://github.com/alice/site')
    await load()
    await screen.findByText('Repository alice/site loaded successfully')
    await userEvent.clear(screen.getByLabelText('Project name'))
    await userEvent.type(screen.getByLabelText('Project name'), 'My Site')
    await userEvent.click(screen.getByRole('button', { name: 'Create & Deploy Project' }))
    expect(await screen.findByText('Project created successfully!')).toBeInTheDocument()
    expect(await screen.findByText('Deployment started successfully! Redirecting to deployment...')).toBeInTheDocument()

    const created = calls.find((c) => c.path === '/api/projects/public')?.body as Record<string, unknown>
    expect(Object.keys(created).sort()).toEqual(['branch', 'buildConfig', 'description', 'name', 'repository'])
    expect(created).toEqual({
      name: 'My Site',
      description: 'A static site',
      branch: 'main',
      buildConfig: { installCommand: '', buildCommand: '', outputDirectory: '.', startCommand: '' },
      // Only the URL: the server finds every fact about the repository itself.
      repository: { url: makeLookup().repository.url },
    })
    expect(calls.find((c) => c.path === '/api/deployments')?.body).toEqual({ projectId: 'p9', version: '1.0.0' })
    await waitFor(() => expect(router.state.location.pathname).toBe('/deployments/d9'), { timeout: 3000 })
  })

  it('shows the server message when creation fails', async () => {
    setup({
      'POST /api/projects/public-repo': ok(makeLookup()),
      'POST /api/projects/public': fail(403, 'Your Free plan allows 3 projects'),
    })
    await openPublic()
    await userEvent.type(screen.getByLabelText('Repository URL'), 'https://github.com/alice/site')
    await load()
    await screen.findByText('Repository alice/site loaded successfully')
    await userEvent.click(screen.getByRole('button', { name: 'Create & Deploy Project' }))
    expect(await screen.findByText('Your Free plan allows 3 projects')).toBeInTheDocument()
  })

  it('searches the connected account\'s repositories', async () => {
    const repo = (id: number, name: string, description: string, priv = false) => ({
      id,
      name,
      fullName: `ada/${name}`,
      description,
      private: priv,
      defaultBranch: 'main',
      updatedAt: '2026-03-01T00:00:00Z',
      url: `https://github.com/ada/${name}`,
    })
    setup(
      {},
      {
        ...testUser,
        github: {
          connected: true,
          username: 'ada',
          repos: [repo(1, 'blog', 'My blog'), repo(2, 'notes', 'Lecture notes', true), repo(3, 'engine', 'Analytical')],
        },
      },
    )
    expect(await screen.findByText('3 of 3 repositories')).toBeInTheDocument()
    await userEvent.type(screen.getByLabelText('Search repositories'), 'lecture')
    expect(screen.getByText('1 of 3 repositories')).toBeInTheDocument()
    await userEvent.clear(screen.getByLabelText('Search repositories'))
    await userEvent.type(screen.getByLabelText('Search repositories'), 'ada/eng')
    expect(screen.getByText('1 of 3 repositories')).toBeInTheDocument()
    await userEvent.type(screen.getByLabelText('Search repositories'), 'zzz')
    expect(screen.getByText('No repositories found')).toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Clear search' }))
    expect(screen.getByText('3 of 3 repositories')).toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: /notes/ }))
    expect(within(screen.getByRole('note')).getByText(/private/)).toBeInTheDocument()
  })
})

describe('new project rules', () => {
  it('needs a selected repository, then a name', () => {
    expect(newProjectError({ repository: null, name: 'x', branch: '', description: '' })).toBe('Please select a repository')
    expect(newProjectError({ repository: {}, name: '  ', branch: '', description: '' })).toBe('Project name is required')
    expect(newProjectError({ repository: {}, name: 'x', branch: '', description: '' })).toBeNull()
  })
})
