import { describe, expect, it, vi } from 'vitest'
import { fail, mockApi, ok } from '@/test/utils'
import { api, ApiError, errorMessage } from './api-client'

describe('api client', () => {
  it('sends the stored token and JSON, and unwraps data', async () => {
    localStorage.setItem('token', 'abc')
    const { calls } = mockApi({ 'POST /api/things': ok({ thing: { id: 1 } }) })
    const data = await api.post<{ thing: { id: number } }>('/api/things', { name: 'x' })
    expect(data).toEqual({ thing: { id: 1 } })
    expect(calls[0].headers.Authorization).toBe('Bearer abc')
    expect(calls[0].headers['Content-Type']).toBe('application/json')
    expect(calls[0].body).toEqual({ name: 'x' })
  })

  it('sends no Authorization header without a token', async () => {
    const { calls } = mockApi({ 'GET /api/health': ok({}) })
    await api.get('/api/health')
    expect(calls[0].headers.Authorization).toBeUndefined()
  })

  it('adds query parameters', async () => {
    const { fetchMock } = mockApi({ 'GET /api/deployments/public': ok({ deployments: [] }) })
    await api.get('/api/deployments/public', { params: { limit: 3, sort: 'recent', q: undefined } })
    expect(String(fetchMock.mock.calls[0][0])).toBe('/api/deployments/public?limit=3&sort=recent')
  })

  it('throws ApiError with the status and the server message', async () => {
    mockApi({ 'POST /api/auth/login': fail(401, 'Invalid email or password') })
    const err = await api.post('/api/auth/login', {}).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ status: 401, message: 'Invalid email or password' })
  })

  it('throws on success:false even with a 200', async () => {
    mockApi({ 'GET /api/x': { status: 200, body: { success: false, message: 'Nope' } } })
    await expect(api.get('/api/x')).rejects.toMatchObject({ status: 200, message: 'Nope' })
  })

  it('describes a failure without a message', async () => {
    mockApi({ 'GET /api/x': { status: 502 } })
    const err = await api.get('/api/x').catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 502, serverMessage: undefined })
    expect(errorMessage(err, 'Fallback', true)).toBe('Fallback')
  })

  it('reports an unreachable server as status 0', async () => {
    vi.stubGlobal('fetch', () => Promise.reject(new TypeError('Failed to fetch')))
    const err = await api.get('/api/x').catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 0 })
    expect(errorMessage(err, 'Fallback', true)).toMatch(/could not reach the server/i)
    expect(errorMessage(err, 'Fallback')).toBe('Fallback')
  })
})
