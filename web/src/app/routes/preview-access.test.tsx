import { screen, waitFor } from '@testing-library/react'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { fail, mockApi, ok, renderApp, testUser } from '@/test/utils'
import { previewNavigation } from './preview-access'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

describe('Preview access hand-off', () => {
  it('asks for a pass to the preview and goes there, signed in', async () => {
    const go = vi.spyOn(previewNavigation, 'go').mockImplementation(() => {})
    const { calls } = mockApi({
      'GET /api/auth/me': ok({ user: testUser }),
      'POST /api/previews/access': ok({ url: 'http://site--pr-1.localhost:8080/.gantry/preview-access?ticket=t&to=%2Fdocs' }),
    })
    renderApp('/preview-access?host=site--pr-1.localhost%3A8080&to=%2Fdocs', { user: testUser })
    await waitFor(() =>
      expect(go).toHaveBeenCalledWith('http://site--pr-1.localhost:8080/.gantry/preview-access?ticket=t&to=%2Fdocs'),
    )
    expect(calls.find((c) => c.path === '/api/previews/access')?.body).toEqual({
      host: 'site--pr-1.localhost:8080',
      to: '/docs',
    })
  })

  it("says why someone else's preview cannot be opened", async () => {
    const go = vi.spyOn(previewNavigation, 'go').mockImplementation(() => {})
    mockApi({
      'GET /api/auth/me': ok({ user: testUser }),
      'POST /api/previews/access': fail(404, "This preview is not one of yours: only its project's owner can open it"),
    })
    renderApp('/preview-access?host=site--pr-1.localhost&to=%2F', { user: testUser })
    expect(await screen.findByText('This preview cannot be opened')).toBeInTheDocument()
    expect(screen.getByText("This preview is not one of yours: only its project's owner can open it")).toBeInTheDocument()
    expect(go).not.toHaveBeenCalled()
  })

  it('asks a visitor to sign in first', async () => {
    const { calls } = mockApi({})
    renderApp('/preview-access?host=site--pr-1.localhost&to=%2F')
    expect(await screen.findByRole('heading', { name: 'Sign in to open this preview' })).toBeInTheDocument()
    expect(screen.getByLabelText('Email address')).toBeInTheDocument()
    expect(calls.some((c) => c.path === '/api/previews/access')).toBe(false)
  })
})
