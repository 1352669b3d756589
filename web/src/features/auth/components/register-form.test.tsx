import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { fail, mockApi, ok, renderApp, testUser } from '@/test/utils'

const field = (label: string) => screen.getByLabelText(label, { selector: 'input' })
const submit = () => screen.getByRole('button', { name: /create account/i })

async function fill(values: Partial<Record<string, string>>) {
  const user = userEvent.setup()
  for (const [label, value] of Object.entries(values)) {
    await user.clear(field(label))
    if (value) await user.type(field(label), value)
  }
  return user
}

const valid = {
  'Full name': 'Ada Lovelace',
  Username: 'ada_l',
  'Email address': 'ada@example.com',
  Password: 'secret1',
  'Confirm password': 'secret1',
}

async function acceptTerms() {
  await userEvent.click(screen.getByRole('checkbox', { name: /i agree to the terms of service/i }))
}

describe('registration form', () => {
  it('shows every "required" message under its field', async () => {
    const { calls } = mockApi({})
    renderApp('/register')
    await userEvent.click(submit())
    expect(field('Full name')).toHaveAccessibleDescription('Full name is required')
    expect(field('Username')).toHaveAccessibleDescription('Username is required')
    expect(field('Email address')).toHaveAccessibleDescription('Email is required')
    expect(field('Password')).toHaveAccessibleDescription('Password is required')
    expect(field('Confirm password')).toHaveAccessibleDescription('Please confirm your password')
    expect(screen.getByRole('checkbox')).toHaveAccessibleDescription(
      'You must accept the terms and privacy policy',
    )
    expect(field('Full name')).toHaveFocus()
    expect(calls.filter((c) => c.path === '/api/auth/register')).toHaveLength(0)
  })

  it.each([
    ['Username', 'ab', 'Username must be at least 3 characters long'],
    ['Username', 'ada lovelace!', 'Username can only contain letters, numbers, underscores, and hyphens'],
    ['Email address', 'ada@example', 'Please enter a valid email address'],
    ['Password', '12345', 'Password must be at least 6 characters long'],
    ['Full name', 'x'.repeat(101), 'Full name cannot exceed 100 characters'],
  ])('%s "%s" shows "%s"', async (label, value, message) => {
    mockApi({})
    renderApp('/register')
    await fill({ ...valid, [label]: value })
    if (label === 'Password') await fill({ 'Confirm password': value })
    await acceptTerms()
    await userEvent.click(submit())
    expect(field(label)).toHaveAccessibleDescription(message)
    expect(screen.getAllByText(message)).toHaveLength(1)
  })

  it('says when the passwords do not match', async () => {
    mockApi({})
    renderApp('/register')
    await fill({ ...valid, 'Confirm password': 'secret2' })
    await acceptTerms()
    await userEvent.click(submit())
    expect(field('Confirm password')).toHaveAccessibleDescription('Passwords do not match')
    expect(field('Password')).not.toHaveAccessibleDescription('Passwords do not match')
  })

  it('clears only the edited field’s error', async () => {
    mockApi({})
    renderApp('/register')
    await userEvent.click(submit())
    expect(screen.getByText('Username is required')).toBeInTheDocument()
    await userEvent.type(field('Username'), 'a')
    expect(screen.queryByText('Username is required')).not.toBeInTheDocument()
    expect(screen.getByText('Email is required')).toBeInTheDocument()
    expect(screen.getByText('Full name is required')).toBeInTheDocument()
  })

  it('requires the terms checkbox', async () => {
    const { calls } = mockApi({})
    renderApp('/register')
    await fill(valid)
    await userEvent.click(submit())
    expect(screen.getByText('You must accept the terms and privacy policy')).toBeInTheDocument()
    expect(calls.filter((c) => c.path === '/api/auth/register')).toHaveLength(0)
    await acceptTerms()
    expect(screen.queryByText('You must accept the terms and privacy policy')).not.toBeInTheDocument()
  })

  it('sends the account, disables the button while busy, and lands on the dashboard', async () => {
    const { calls } = mockApi({
      // Long enough for the busy label to be seen on a loaded machine.
      'POST /api/auth/register': { ...ok({ user: testUser, token: 'new-token' }), delay: 500 },
      'GET /api/auth/me': ok({ user: testUser }),
    })
    const { router } = renderApp('/register')
    await fill(valid)
    await acceptTerms()
    await userEvent.click(submit())
    const busy = await screen.findByRole('button', { name: /creating account\.\.\./i })
    expect(busy).toBeDisabled()
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'), { timeout: 5000 })
    expect(calls.find((c) => c.path === '/api/auth/register')?.body).toEqual({
      username: 'ada_l',
      email: 'ada@example.com',
      password: 'secret1',
      fullName: 'Ada Lovelace',
    })
    expect(localStorage.getItem('token')).toBe('new-token')
    expect(await screen.findByText(/welcome to gantry/i)).toBeInTheDocument()
  })

  it.each([
    [fail(429, 'slow down'), 'Too many registration attempts. Please wait a few minutes before trying again.'],
    [fail(409, 'That username is already taken'), 'That username is already taken'],
    [fail(500), 'Registration failed'],
  ])('shows the failure toast %#', async (answer, text) => {
    mockApi({ 'POST /api/auth/register': answer })
    const { router } = renderApp('/register')
    await fill(valid)
    await acceptTerms()
    await userEvent.click(submit())
    const toast = await screen.findByText(text)
    expect(within(toast.closest('[role="status"]') as HTMLElement).getByText(text)).toBeInTheDocument()
    expect(router.state.location.pathname).toBe('/register')
    expect(submit()).toBeEnabled()
  })
})
