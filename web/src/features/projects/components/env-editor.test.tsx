import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { makeProject } from '@/test/fixtures'
import { fail, mockApi, ok, renderApp, testUser, type FakeHandler } from '@/test/utils'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

const stored = [
  { key: 'API_URL', value: 'https://api.example.com', isSecret: false },
  { key: 'STRIPE_KEY', value: '••••••••', isSecret: true },
]

function setup(handlers: Record<string, FakeHandler> = {}) {
  const api = mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/projects/p1': ok({ project: makeProject() }),
    'GET /api/projects/p1/env': ok({ variables: stored }),
    ...handlers,
  })
  return { ...api, ...renderApp('/projects/p1/edit', { user: testUser }) }
}

const form = () => screen.getByRole('form', { name: 'Environment variables' })
/** Waits for the editor to show the stored variables (the machine may be busy). */
const loaded = async () => {
  const f = await screen.findByRole('form', { name: 'Environment variables' }, { timeout: 5000 })
  return within(f).findAllByLabelText('Name')
}

describe('environment variables on the project edit screen', () => {
  it('shows plain values, and secrets only as kept', async () => {
    setup()
    const names = await loaded()
    expect(screen.getByRole('heading', { name: 'Environment Variables' })).toBeInTheDocument()
    expect(names.map((n) => (n as HTMLInputElement).value)).toEqual(['API_URL', 'STRIPE_KEY'])
    const values = within(form()).getAllByLabelText('Value') as HTMLInputElement[]
    expect(values[0].value).toBe('https://api.example.com')
    expect(values[1].value).toBe('')
    expect(values[1]).toHaveAttribute('type', 'password')
    expect(values[1]).toHaveAttribute('placeholder', 'Unchanged (hidden)')
    expect(screen.queryByDisplayValue('••••••••')).not.toBeInTheDocument()
    const secrets = within(form()).getAllByRole('checkbox', { name: 'Secret' })
    expect(secrets.map((c) => (c as HTMLInputElement).checked)).toEqual([false, true])
  })

  it('checks names, then saves the whole list with kept secrets empty', async () => {
    const { calls } = setup({ 'PUT /api/projects/p1/env': ({ body }) => ok(body) })
    await loaded()
    await userEvent.click(screen.getByRole('button', { name: 'Add Variable' }))
    const names = within(form()).getAllByLabelText('Name')
    await userEvent.type(names[2], '1BAD')
    await userEvent.type(within(form()).getAllByLabelText('Value')[2], 's3cret-value')
    await userEvent.click(within(form()).getAllByRole('checkbox', { name: 'Secret' })[2])
    await userEvent.click(screen.getByRole('button', { name: 'Save Variables' }))
    expect(names[2]).toHaveAccessibleDescription('Letters, digits and underscores, not starting with a digit')
    expect(calls.some((c) => c.method === 'PUT')).toBe(false)

    await userEvent.clear(names[2])
    await userEvent.type(names[2], 'SESSION_SECRET')
    await userEvent.clear(within(form()).getAllByLabelText('Value')[2])
    await userEvent.click(screen.getByRole('button', { name: 'Save Variables' }))
    expect(within(form()).getAllByLabelText('Value')[2]).toHaveAccessibleDescription('Enter the value of SESSION_SECRET')
    expect(calls.some((c) => c.method === 'PUT')).toBe(false)
    await userEvent.type(within(form()).getAllByLabelText('Value')[2], 's3cret-value')
    await userEvent.click(screen.getByRole('button', { name: 'Remove API_URL' }))
    await userEvent.click(screen.getByRole('button', { name: 'Save Variables' }))
    expect(await screen.findByText('Environment variables saved', undefined, { timeout: 5000 })).toBeInTheDocument()
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      variables: [
        { key: 'STRIPE_KEY', value: '', isSecret: true, scope: 'all' },
        { key: 'SESSION_SECRET', value: 's3cret-value', isSecret: true, scope: 'all' },
      ],
    })
  })

  it('refuses the names Gantry sets, and a secret made plain without its value', async () => {
    setup()
    await loaded()
    const names = within(form()).getAllByLabelText('Name')
    await userEvent.clear(names[0])
    await userEvent.type(names[0], 'PORT')
    await userEvent.click(within(form()).getAllByRole('checkbox', { name: 'Secret' })[1])
    await userEvent.click(screen.getByRole('button', { name: 'Save Variables' }))
    expect(names[0]).toHaveAccessibleDescription('PORT is set by Gantry')
    expect(within(form()).getAllByLabelText('Value')[1]).toHaveAccessibleDescription(
      'Enter the value of STRIPE_KEY again to make it a plain variable',
    )
  })

  it('asks for the value of a renamed secret, and keeps a secret whose scope changed', async () => {
    const { calls } = setup({ 'PUT /api/projects/p1/env': ({ body }) => ok(body) })
    await loaded()
    const names = within(form()).getAllByLabelText('Name')
    await userEvent.clear(names[1])
    await userEvent.type(names[1], 'STRIPE_TOKEN')
    await userEvent.click(screen.getByRole('button', { name: 'Save Variables' }))
    expect(within(form()).getAllByLabelText('Value')[1]).toHaveAccessibleDescription(
      'Type the value of STRIPE_TOKEN again: the saved secret stays with the name STRIPE_KEY',
    )
    expect(within(form()).getAllByLabelText('Value')[1]).toHaveAttribute('placeholder', '')
    expect(calls.some((c) => c.method === 'PUT')).toBe(false)

    await userEvent.clear(names[1])
    await userEvent.type(names[1], 'STRIPE_KEY')
    await userEvent.selectOptions(within(form()).getAllByLabelText('Scope')[1], 'production')
    await userEvent.click(screen.getByRole('button', { name: 'Save Variables' }))
    expect(await screen.findByText('Environment variables saved', undefined, { timeout: 5000 })).toBeInTheDocument()
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      variables: [
        { key: 'API_URL', value: 'https://api.example.com', isSecret: false, scope: 'all' },
        { key: 'STRIPE_KEY', value: '', isSecret: true, scope: 'production' },
      ],
    })
  })

  it('shows the server message when saving fails', async () => {
    setup({ 'PUT /api/projects/p1/env': fail(400, 'A project can have at most 100 environment variables') })
    await loaded()
    await userEvent.click(screen.getByRole('button', { name: 'Save Variables' }))
    expect(
      await screen.findByText('A project can have at most 100 environment variables', undefined, { timeout: 5000 }),
    ).toBeInTheDocument()
  })

  it('says when the variables cannot be loaded', async () => {
    setup({ 'GET /api/projects/p1/env': fail(500) })
    // After the client's one retry.
    expect(
      await screen.findByText('The environment variables could not be loaded.', undefined, { timeout: 5000 }),
    ).toBeInTheDocument()
  })
})

describe('environment variable scopes', () => {
  it('shows each scope, defaults new variables to All and saves the chosen one', async () => {
    const { calls } = setup({
      'GET /api/projects/p1/env': ok({
        variables: [
          { key: 'API_URL', value: 'https://api.example.com', isSecret: false, scope: 'production' },
          { key: 'OLD', value: 'x', isSecret: false },
        ],
      }),
      'PUT /api/projects/p1/env': (req) => ok(req.body),
    })
    await loaded()
    const scopes = () => within(form()).getAllByLabelText('Scope') as HTMLSelectElement[]
    expect(scopes().map((s) => s.value)).toEqual(['production', 'all'])
    expect(within(scopes()[0]).getAllByRole('option').map((o) => o.textContent)).toEqual(['All', 'Production', 'Preview'])
    await userEvent.click(screen.getByRole('button', { name: 'Add Variable' }))
    expect(scopes()[2].value).toBe('all')
    await userEvent.type(within(form()).getAllByLabelText('Name')[2], 'PREVIEW_BANNER')
    await userEvent.type(within(form()).getAllByLabelText('Value')[2], 'on')
    await userEvent.selectOptions(scopes()[2], 'preview')
    await userEvent.click(screen.getByRole('button', { name: 'Save Variables' }))
    expect(await screen.findByText('Environment variables saved', undefined, { timeout: 5000 })).toBeInTheDocument()
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      variables: [
        { key: 'API_URL', value: 'https://api.example.com', isSecret: false, scope: 'production' },
        { key: 'OLD', value: 'x', isSecret: false, scope: 'all' },
        { key: 'PREVIEW_BANNER', value: 'on', isSecret: false, scope: 'preview' },
      ],
    })
  })
})
