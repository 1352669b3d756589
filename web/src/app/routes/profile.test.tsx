import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { fail, mockApi, ok, renderApp, testUser } from '@/test/utils'

// The notifications endpoint does not exist yet; its 404 is only logged.
beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

const stats = { totalProjects: 2, totalDeployments: 7, activeDeployments: 1, accountAge: 41 }

function api(extra: Parameters<typeof mockApi>[0] = {}) {
  return mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/users/stats': ok({ stats }),
    ...extra,
  })
}

describe('profile screen', () => {
  it('shows the account, its status and statistics', async () => {
    api()
    renderApp('/profile', { user: testUser })
    expect(await screen.findByRole('heading', { level: 1, name: 'Profile' })).toBeInTheDocument()
    expect(screen.getByLabelText('Full name')).toHaveValue('Ada Lovelace')
    expect(screen.getByLabelText('Username')).toHaveValue('ada')
    expect(screen.getByLabelText('Email address')).toHaveValue('ada@example.com')

    const status = screen.getByRole('heading', { name: 'Account status' }).closest('div')!.parentElement!
    expect(within(status).getByText('Subscription').nextSibling).toHaveTextContent('Free')
    expect(within(status).getByText('Not verified')).toBeInTheDocument()
    expect(within(status).getByText('Active', { selector: 'dt' }).nextSibling).toHaveTextContent('Active')
    expect(within(status).getByText('Role').nextSibling).toHaveTextContent('Student')
    expect(within(status).getByText('Plan limits').nextSibling).toHaveTextContent('3 projects · 5 deployments')

    expect(screen.getByText('Not connected')).toBeInTheDocument()
    expect(screen.getByRole('link', { name: /connect github/i })).toHaveAttribute('href', '/github-integration')
    expect(screen.getByText('Member since').nextSibling).toHaveTextContent('Jan 10, 2026')
    expect(screen.getByText('Last login').nextSibling).toHaveTextContent('Mar 1, 2026, 12:30')

    expect(await screen.findByText('41')).toBeInTheDocument()
    for (const [label, value] of [
      ['Total Projects', '2'],
      ['Total Deployments', '7'],
      ['Active Deployments', '1'],
      ['Account Age', '41days'],
    ]) {
      expect(screen.getByText(label).closest('div')).toHaveTextContent(`${label}${value}`)
    }
  })

  it('shows a connected GitHub account', async () => {
    mockApi({
      'GET /api/auth/me': ok({
        user: { ...testUser, github: { connected: true, username: 'ada-gh', repos: [] } },
      }),
      'GET /api/users/stats': ok({ stats }),
    })
    renderApp('/profile', { user: testUser })
    expect(await screen.findByText('@ada-gh')).toBeInTheDocument()
    expect(screen.getByText('Connected')).toBeInTheDocument()
  })

  it('validates before saving', async () => {
    const { calls } = api()
    renderApp('/profile', { user: testUser })
    const user = userEvent.setup()
    await user.clear(await screen.findByLabelText('Full name'))
    await user.clear(screen.getByLabelText('Email address'))
    await user.type(screen.getByLabelText('Email address'), 'nope')
    await user.clear(screen.getByLabelText('Username'))
    await user.click(screen.getByRole('button', { name: 'Save changes' }))
    expect(screen.getByLabelText('Full name')).toHaveAccessibleDescription('Full name is required')
    expect(screen.getByLabelText('Username')).toHaveAccessibleDescription('Username is required')
    expect(screen.getByLabelText('Email address')).toHaveAccessibleDescription('Please enter a valid email address')
    expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(0)
    await user.type(screen.getByLabelText('Username'), 'x')
    expect(screen.getByLabelText('Username')).not.toHaveAccessibleDescription()
  })

  it('saves and shows the saved user everywhere', async () => {
    const { calls } = api({
      'PUT /api/users/profile': ({ body }) => ok({ user: { ...testUser, ...(body as object) } }),
    })
    renderApp('/profile', { user: testUser })
    const user = userEvent.setup()
    const name = await screen.findByLabelText('Full name')
    await user.clear(name)
    await user.type(name, 'Ada King')
    await user.click(screen.getByRole('button', { name: 'Save changes' }))
    expect(await screen.findByText('Profile updated successfully')).toBeInTheDocument()
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      fullName: 'Ada King',
      username: 'ada',
      email: 'ada@example.com',
    })
    await waitFor(() =>
      expect(screen.getByRole('button', { name: 'Account menu' })).toHaveTextContent('Ada King'),
    )
    expect(screen.getByLabelText('Full name')).toHaveValue('Ada King')
    expect(screen.getByRole('button', { name: 'Save changes' })).toBeDisabled()
  })

  it.each([
    [fail(409, 'That username is already taken'), 'That username is already taken'],
    [fail(500), 'Profile update failed'],
  ])('shows the failure %#', async (answer, text) => {
    api({ 'PUT /api/users/profile': answer })
    renderApp('/profile', { user: testUser })
    const user = userEvent.setup()
    await user.type(await screen.findByLabelText('Username'), '2')
    await user.click(screen.getByRole('button', { name: 'Save changes' }))
    expect(await screen.findByText(text)).toBeInTheDocument()
    expect(screen.getByLabelText('Username')).toHaveValue('ada2')
  })

  it('offers a retry when the statistics fail', async () => {
    mockApi({ 'GET /api/auth/me': ok({ user: testUser }), 'GET /api/users/stats': fail(500) })
    renderApp('/profile', { user: testUser })
    expect(await screen.findByText('Statistics could not be loaded.', {}, { timeout: 4000 })).toBeInTheDocument()
    expect(screen.getByRole('button', { name: 'Try again' })).toBeInTheDocument()
  })

  it('shows the storage used against the budget, here and on the plan card', async () => {
    const MiB = 2 ** 20
    api({
      'GET /api/users/stats': ok({
        stats: {
          ...stats,
          storage: {
            used: 412 * MiB,
            budget: 1024 * MiB,
            files: 380 * MiB,
            logs: 12 * MiB,
            sites: 30 * MiB,
            apps: 300 * MiB,
            rollbacks: 50 * MiB,
          },
        },
      }),
    })
    renderApp('/profile', { user: testUser })
    const card = (await screen.findByRole('heading', { name: 'Storage' })).closest('div')!.parentElement!
    expect(await within(card).findByTestId('storage-total')).toHaveTextContent('412 MB of 1 GB')
    expect(within(card).getByTestId('storage-split')).toHaveTextContent(
      'Live sites30 MBLive apps300 MBKept for rollbackremoved first when space runs out50 MBLogs12 MB',
    )
    // One segment per part that holds something, sized on the budget.
    const segments = within(card).getByTestId('storage-split-bar').children
    expect([...segments].map((s) => (s as HTMLElement).style.width)).toEqual(
      [30, 300, 50, 12].map((n) => `${(n / 1024) * 100}%`),
    )
    expect(within(card).getByText(/newest 10 stopped deployments/)).toBeInTheDocument()
    expect(within(card).queryByText(/storage is (full|almost full)/)).not.toBeInTheDocument()
    const meter = within(card).getByRole('meter', { name: 'Storage used' })
    expect(meter).toHaveAttribute('aria-valuetext', '412 MB of 1 GB')

    const plan = screen.getByTestId('plan-storage')
    expect(plan).toHaveTextContent('Storage412 MB of 1 GB')
    expect(within(plan).getByRole('meter')).toHaveAttribute('aria-valuenow', String(412 * MiB))
    expect(within(plan).queryByText(/Full/)).not.toBeInTheDocument()
  })

  it('says when the storage is full of live deployments', async () => {
    const GiB = 2 ** 30
    api({
      'GET /api/users/stats': ok({
        stats: {
          ...stats,
          storage: { used: GiB + GiB / 50, budget: GiB, files: GiB + GiB / 50, logs: 0, sites: GiB + GiB / 50, apps: 0, rollbacks: 0 },
        },
      }),
    })
    renderApp('/profile', { user: testUser })
    expect(
      await screen.findByText(
        'Your storage is full of live deployments and logs, so new deployments are refused. Stop or delete a project, or clear its logs, to free space.',
      ),
    ).toBeInTheDocument()
    expect(screen.getByTestId('storage-total')).toHaveTextContent('1.02 GB of 1 GB')
    const plan = screen.getByTestId('plan-storage')
    expect(plan).toHaveTextContent('1.02 GB of 1 GB')
    expect(within(plan).getByText('Full: free space to deploy again.')).toBeInTheDocument()
    // The bar stops at the budget.
    expect(within(plan).getByRole('meter')).toHaveAttribute('aria-valuenow', String(GiB))
  })

  it('says a deploy makes room when rollbacks fill the storage', async () => {
    const MiB = 2 ** 20
    api({
      'GET /api/users/stats': ok({
        stats: {
          ...stats,
          storage: { used: 1400 * MiB, budget: 1024 * MiB, files: 1390 * MiB, logs: 10 * MiB, sites: 0, apps: 700 * MiB, rollbacks: 690 * MiB },
        },
      }),
    })
    renderApp('/profile', { user: testUser })
    expect(
      await screen.findByText(
        'Your storage is full. Your next deploy first removes the oldest deployments kept for rollback to make room.',
      ),
    ).toBeInTheDocument()
    expect(screen.queryByText(/refused/)).not.toBeInTheDocument()
    const plan = screen.getByTestId('plan-storage')
    expect(within(plan).getByText('Full: a deploy removes old rollbacks.')).toBeInTheDocument()
  })
})
