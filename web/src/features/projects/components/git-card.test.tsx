import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { makeProject } from '@/test/fixtures'
import { fail, mockApi, ok, renderApp, testUser, type FakeHandler } from '@/test/utils'
import { HOOK_ROTATED } from '../api/rotate-deploy-hook'
import type { Project, ProjectGitHub } from '../types'
import { ROTATE_HOOK_TITLE, webhookState } from './git-card'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

const HOOK = 'http://localhost:8080/api/hooks/deploy/p1/4f9a0c2e'
const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000).toISOString()

const SHA = '9f3c2a1' + 'b'.repeat(33)

const github: ProjectGitHub = {
  webhook: {
    active: true,
    error: null,
    lastDelivery: { at: minutesAgo(5), event: 'push', result: 'ok', message: 'Deploying 3333333 to production' },
  },
  pullRequests: [
    { number: 14, title: 'Fix typo in README', author: 'stranger', headBranch: 'patch-1', fork: true, state: 'awaiting_approval', url: 'https://github.com/alice/site/pull/14', headSha: SHA, diffUrl: 'https://github.com/alice/site/pull/14/files', deploymentId: null },
    { number: 12, title: 'New nav', author: 'alice', headBranch: 'fix-nav', fork: false, state: 'open', url: 'https://github.com/alice/site/pull/12', headSha: '1'.repeat(40), diffUrl: 'https://github.com/alice/site/pull/12/files', deploymentId: 'pr12' },
  ],
  forkVariables: ['PREVIEW_API_URL', 'STRIPE_TEST_KEY'],
}

/** A project outside GitHub (a public repository on another host). */
const elsewhere = (overrides: Partial<Project> = {}) => {
  const p = makeProject({ autoDeploy: true, watchCommits: false, deployHookUrl: HOOK, ...overrides })
  return { ...p, repository: { ...p.repository, url: 'https://codeberg.org/alice/site', fullName: 'alice/site' } }
}

function setup(handlers: Record<string, FakeHandler> = {}) {
  const api = mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/projects/p1': ok({ project: makeProject({ autoDeploy: true, deployHookUrl: HOOK }) }),
    'GET /api/projects/p1/github': ok(github),
    'GET /api/projects/p1/previews': ok({ previews: [] }),
    'GET /api/deployments': ok({ deployments: [] }),
    ...handlers,
  })
  return { ...api, ...renderApp('/projects/p1', { user: testUser }) }
}

const gitCard = () => screen.findByTestId('git-card')

describe('helpers', () => {
  it('words the webhook state', () => {
    expect(webhookState(null).label).toBe('Missing')
    expect(webhookState({ active: true, error: null, lastDelivery: null }).label).toBe('Active')
    expect(webhookState({ active: false, error: null, lastDelivery: null }).label).toBe('Inactive')
    expect(webhookState({ active: true, error: 'Bad credentials', lastDelivery: null }).label).toBe('Error')
  })
})

describe('Git card', () => {
  it('shows the branch, the switches, the hook and the GitHub webhook', async () => {
    setup()
    const card = await gitCard()
    expect(within(card).getByText('main')).toBeInTheDocument()
    expect(within(card).getByRole('switch', { name: 'Auto-deploy' })).toHaveAttribute('aria-checked', 'true')
    expect(within(card).getByLabelText('Deploy hook')).toHaveValue(HOOK)
    expect(await within(card).findByTestId('webhook-state')).toHaveTextContent('Active')
    const delivery = within(card).getByTestId('last-delivery')
    expect(delivery).toHaveTextContent('push')
    expect(delivery).toHaveTextContent('Delivered')
    expect(delivery).toHaveTextContent('5m ago')
    expect(delivery).toHaveTextContent('Deploying 3333333 to production')
    // GitHub tells Gantry about pushes: no watcher, no reconnect.
    expect(within(card).queryByRole('switch', { name: 'Watch for new commits' })).not.toBeInTheDocument()
    expect(within(card).queryByRole('button', { name: 'Reconnect webhook' })).not.toBeInTheDocument()
  })

  it('turns Auto-deploy off at once', async () => {
    let on = true
    const { calls } = setup({
      'GET /api/projects/p1': () => ok({ project: makeProject({ autoDeploy: on, deployHookUrl: HOOK }) }),
      'PUT /api/projects/p1': (req) => {
        on = (req.body as { autoDeploy: boolean }).autoDeploy
        return ok({ project: makeProject({ autoDeploy: on, deployHookUrl: HOOK }) })
      },
    })
    const toggle = within(await gitCard()).getByRole('switch', { name: 'Auto-deploy' })
    await userEvent.click(toggle)
    expect(await screen.findByText('Auto-deploy turned off')).toBeInTheDocument()
    await waitFor(() => expect(toggle).toHaveAttribute('aria-checked', 'false'))
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([{ autoDeploy: false }])
  })

  it('offers "Watch for new commits" for a repository outside GitHub', async () => {
    const { calls } = setup({
      'GET /api/projects/p1': ok({ project: elsewhere() }),
      'GET /api/projects/p1/github': fail(404, 'Not a GitHub project'),
      'PUT /api/projects/p1': ok({ project: elsewhere({ watchCommits: true }) }),
    })
    const card = await gitCard()
    const watch = await within(card).findByRole('switch', { name: 'Watch for new commits' })
    expect(watch).toHaveAttribute('aria-checked', 'false')
    await userEvent.click(watch)
    expect(await screen.findByText('Watching the branch for new commits')).toBeInTheDocument()
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([{ watchCommits: true }])
    expect(within(card).queryByText('GitHub webhook')).not.toBeInTheDocument()
  })

  it('copies the hook URL and says Copied', async () => {
    setup()
    const user = userEvent.setup()
    const writeText = vi.spyOn(navigator.clipboard, 'writeText').mockResolvedValue()
    const card = await gitCard()
    await user.click(within(card).getByRole('button', { name: 'Copy' }))
    expect(writeText).toHaveBeenCalledWith(HOOK)
    expect(await within(card).findByRole('button', { name: 'Copied' })).toBeInTheDocument()
  })

  it('rotates the hook after asking', async () => {
    const rotated = `${HOOK.slice(0, -8)}b7e1d3aa`
    let hook = HOOK
    const { calls } = setup({
      'GET /api/projects/p1': () => ok({ project: makeProject({ autoDeploy: true, deployHookUrl: hook }) }),
      'POST /api/projects/p1/deploy-hook': () => {
        hook = rotated
        return ok({ project: makeProject({ autoDeploy: true, deployHookUrl: hook }) })
      },
    })
    const card = await gitCard()
    await userEvent.click(within(card).getByRole('button', { name: 'Rotate' }))
    const dialog = await screen.findByRole('dialog', { name: ROTATE_HOOK_TITLE })
    expect(dialog).toHaveTextContent('The old URL stops working')
    await userEvent.click(within(dialog).getByRole('button', { name: 'Rotate' }))
    expect(await screen.findByText(HOOK_ROTATED)).toBeInTheDocument()
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual(['/api/projects/p1/deploy-hook'])
    await waitFor(() => expect(within(card).getByLabelText('Deploy hook')).toHaveValue(rotated))
  })

  it('reconnects a webhook GitHub refused', async () => {
    const { calls } = setup({
      'GET /api/projects/p1/github': ok({
        webhook: { active: false, error: 'GitHub refused the webhook (403): reconnect GitHub', lastDelivery: null },
        pullRequests: [],
      }),
      'POST /api/projects/p1/webhook': ok({}),
    })
    const card = await gitCard()
    expect(await within(card).findByTestId('webhook-state')).toHaveTextContent('Error')
    expect(card).toHaveTextContent('GitHub refused the webhook (403)')
    await userEvent.click(within(card).getByRole('button', { name: 'Reconnect webhook' }))
    expect(await screen.findByText('Webhook reconnected')).toBeInTheDocument()
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual(['/api/projects/p1/webhook'])
  })

  it('treats a GitHub repository the server has no webhook for (404) as elsewhere', async () => {
    setup({ 'GET /api/projects/p1/github': fail(404, 'Not found') })
    const card = await gitCard()
    expect(await within(card).findByRole('switch', { name: 'Watch for new commits' })).toBeInTheDocument()
    expect(within(card).queryByText('GitHub webhook')).not.toBeInTheDocument()
  })

  it('approves a pull request from a fork', async () => {
    const { calls } = setup({ 'POST /api/projects/p1/pull-requests/14/approve': ok({}) })
    const card = await gitCard()
    const waiting = await within(card).findByRole('list', { name: 'Pull requests awaiting approval' })
    expect(within(waiting).getAllByRole('listitem')).toHaveLength(1)
    expect(within(waiting).getByRole('link', { name: '#14 Fix typo in README' })).toHaveAttribute(
      'href',
      'https://github.com/alice/site/pull/14',
    )
    // The commit the approval builds, the way to review it, and what it will see.
    expect(within(waiting).getByText('9f3c2a1')).toHaveAttribute('title', SHA)
    expect(within(waiting).getByRole('link', { name: 'Review changes' })).toHaveAttribute(
      'href',
      'https://github.com/alice/site/pull/14/files',
    )
    expect(within(card).getByTestId('fork-variables')).toHaveTextContent(
      "A fork's build gets only the variables scoped to Preview: PREVIEW_API_URL, STRIPE_TEST_KEY.",
    )
    await userEvent.click(within(waiting).getByRole('button', { name: 'Approve 9f3c2a1 and build' }))
    expect(await screen.findByText('Pull request #14 approved: its preview is building')).toBeInTheDocument()
    const posts = calls.filter((c) => c.method === 'POST')
    expect(posts.map((c) => [c.path, c.body])).toEqual([['/api/projects/p1/pull-requests/14/approve', { sha: SHA }]])
  })

  it('says when the pull request moved on and asks for a new review', async () => {
    setup({
      'POST /api/projects/p1/pull-requests/14/approve': {
        status: 409,
        body: {
          success: false,
          message: 'The pull request changed since you looked: its head is now commit 0aa11bb. Review the new changes and approve again',
        },
      },
      'GET /api/projects/p1/github': ok({ ...github, forkVariables: [] }),
    })
    const card = await gitCard()
    const waiting = await within(card).findByRole('list', { name: 'Pull requests awaiting approval' })
    expect(within(card).getByTestId('fork-variables')).toHaveTextContent("A fork's build gets no variables: none is scoped to Preview.")
    await userEvent.click(within(waiting).getByRole('button', { name: 'Approve 9f3c2a1 and build' }))
    expect(await screen.findByText(/The pull request changed since you looked/)).toBeInTheDocument()
  })
})
