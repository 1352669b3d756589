import { screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { fail, mockApi, ok, renderApp, testUser } from '@/test/utils'

async function signIn(email = 'ada@example.com', password = 'secret1') {
  const user = userEvent.setup()
  await user.type(screen.getByLabelText('Email address'), email)
  await user.type(screen.getByLabelText('Password', { selector: 'input' }), password)
  await user.click(screen.getByRole('button', { name: 'Sign in' }))
}

describe('login form', () => {
  it('shows "Signing in..." while busy, then lands on the dashboard', async () => {
    const { calls } = mockApi({
      // Long enough for the busy label to be seen on a loaded machine.
      'POST /api/auth/login': { ...ok({ user: testUser, token: 'tok' }), delay: 500 },
      'GET /api/auth/me': ok({ user: testUser }),
    })
    const { router } = renderApp('/login')
    await signIn()
    expect(await screen.findByRole('button', { name: 'Signing in...' })).toBeInTheDocument()
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'), { timeout: 5000 })
    expect(await screen.findByText('Login successful!')).toBeInTheDocument()
    expect(calls.find((c) => c.path === '/api/auth/login')?.body).toEqual({
      email: 'ada@example.com',
      password: 'secret1',
    })
    expect(localStorage.getItem('token')).toBe('tok')
  })

  it('shows the rate-limit text on 429', async () => {
    mockApi({ 'POST /api/auth/login': fail(429, 'Too many requests') })
    renderApp('/login')
    await signIn()
    expect(
      await screen.findByText('Too many login attempts. Please wait a few minutes before trying again.'),
    ).toBeInTheDocument()
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeEnabled()
  })

  it('shows the server message', async () => {
    mockApi({ 'POST /api/auth/login': fail(401, 'Invalid email or password') })
    const { router } = renderApp('/login')
    await signIn()
    expect(await screen.findByText('Invalid email or password')).toBeInTheDocument()
    expect(router.state.location.pathname).toBe('/login')
    expect(localStorage.getItem('token')).toBeNull()
  })

  it('falls back to "Login failed"', async () => {
    mockApi({ 'POST /api/auth/login': fail(500) })
    renderApp('/login')
    await signIn()
    expect(await screen.findByText('Login failed')).toBeInTheDocument()
  })

  it('lets the browser require both fields', () => {
    mockApi({})
    renderApp('/login')
    expect(screen.getByLabelText('Email address')).toBeRequired()
    expect(screen.getByLabelText('Password', { selector: 'input' })).toBeRequired()
  })

  it('shows and hides the password', async () => {
    mockApi({})
    renderApp('/login')
    const input = screen.getByLabelText('Password', { selector: 'input' })
    expect(input).toHaveAttribute('type', 'password')
    await userEvent.click(screen.getByRole('button', { name: 'Show password' }))
    expect(input).toHaveAttribute('type', 'text')
    await userEvent.click(screen.getByRole('button', { name: 'Hide password' }))
    expect(input).toHaveAttribute('type', 'password')
  })

  it('has remember-me, forgot-password, terms and privacy', async () => {
    mockApi({})
    renderApp('/login')
    expect(screen.getByRole('checkbox', { name: 'Remember me' })).not.toBeChecked()
    await userEvent.click(screen.getByRole('button', { name: 'Forgot password?' }))
    expect(await screen.findByText(/password reset is coming soon/i)).toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Terms of Service' }))
    expect(screen.getByRole('dialog', { name: 'Terms of Service' })).toBeInTheDocument()
    await userEvent.keyboard('{Escape}')
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Privacy Policy' }))
    expect(screen.getByRole('dialog', { name: 'Privacy Policy' })).toBeInTheDocument()
  })
})
