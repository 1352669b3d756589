import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { makeProject } from '@/test/fixtures'
import { fail, mockApi, ok, renderApp, testUser, type FakeHandler } from '@/test/utils'
import { dataFolderLabel } from '../api/get-data'
import type { Project } from '../types'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

const app = (): Project => {
  const p = makeProject()
  return { ...p, buildConfig: { ...p.buildConfig, startCommand: 'python3 app.py' } }
}

function setup(project: Project = app(), handlers: Record<string, FakeHandler> = {}) {
  const api = mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/projects/p1': ok({ project }),
    ...handlers,
  })
  return { ...api, ...renderApp('/projects/p1', { user: testUser }) }
}

const folders = {
  mount: '/data',
  size: 6 * 1024 * 1024,
  snapshots: [{ id: '20260304T030000Z', at: '2026-03-04T03:00:00Z', bytes: 2 * 1024 * 1024 }],
  folders: [
    { name: 'production', bytes: 5 * 1024 * 1024, measuredAt: new Date(Date.now() - 120_000).toISOString() },
    { name: 'preview-portfolio-site--feature', bytes: 1024 * 1024, measuredAt: new Date().toISOString() },
  ],
}

describe('data card', () => {
  it('lists what each data folder holds, production first', async () => {
    setup(app(), { 'GET /api/projects/p1/data': ok({ data: folders }) })
    const card = await screen.findByTestId('data-card')
    const list = await within(card).findByRole('list', { name: 'Data folders' })
    const rows = within(list).getAllByRole('listitem')
    expect(rows.map((r) => r.textContent)).toEqual([
      expect.stringMatching(/^Production5 MBmeasured 2m ago$/),
      expect.stringMatching(/^Preview portfolio-site--feature1 MBmeasured just now$/),
    ])
    expect(card).toHaveTextContent('/data')
    expect(card).toHaveTextContent('DATA_DIR')
  })

  it('says when nothing is stored yet', async () => {
    setup(app(), { 'GET /api/projects/p1/data': ok({ data: { mount: '/data', size: 0, folders: [] } }) })
    const card = await screen.findByTestId('data-card')
    expect(await within(card).findByText(/Nothing stored yet/)).toBeInTheDocument()
  })

  it('is not shown for a static site without data', async () => {
    setup(makeProject(), { 'GET /api/projects/p1/data': ok({ data: { mount: '/data', size: 0, folders: [] } }) })
    expect(await screen.findByRole('button', { name: 'Delete' })).toBeInTheDocument()
    expect(screen.queryByTestId('data-card')).not.toBeInTheDocument()
  })

  it('names the data folder in the delete confirmation', async () => {
    setup(app(), { 'GET /api/projects/p1/data': ok({ data: folders }) })
    await screen.findByRole('list', { name: 'Data folders' })
    await userEvent.click(screen.getByRole('button', { name: 'Delete' }))
    expect(screen.getByRole('dialog')).toHaveTextContent(
      'This action cannot be undone. Its data folder (/data, 6 MB) is deleted with it.',
    )
  })

  it('restores an archive and says what failed when the app still runs', async () => {
    const { calls } = setup(app(), {
      'GET /api/projects/p1/data': ok({ data: folders }),
      'POST /api/projects/p1/data/restore': fail(
        400,
        "Stop the app first: a restore replaces the data folder, and never mixes into a running app's files",
      ),
    })
    await screen.findByRole('list', { name: 'Data folders' })
    const file = new File([new Uint8Array([0x1f, 0x8b])], 'ledger-data.tar.gz', { type: 'application/gzip' })
    await userEvent.upload(screen.getByLabelText('Archive to restore'), file)
    expect(await screen.findByText(/Stop the app first/)).toBeInTheDocument()
    expect(calls.some((c) => c.method === 'POST' && c.path === '/api/projects/p1/data/restore')).toBe(true)
  })

  it('restores a daily snapshot', async () => {
    const { calls } = setup(app(), {
      'GET /api/projects/p1/data': ok({ data: folders }),
      'POST /api/projects/p1/data/restore': ok({ data: folders, message: 'Data folder restored' }),
    })
    const list = await screen.findByRole('list', { name: 'Snapshots' })
    expect(list).toHaveTextContent('Mar 4, 2026 · 2 MB')
    await userEvent.click(within(list).getByRole('button', { name: 'Restore the snapshot of Mar 4, 2026' }))
    expect(await screen.findByText('Data folder restored')).toBeInTheDocument()
    const call = calls.find((c) => c.method === 'POST' && c.path === '/api/projects/p1/data/restore')
    expect(call?.search).toBe('?snapshot=20260304T030000Z')
  })

  it('offers no download before the app made its folder', async () => {
    setup(app(), { 'GET /api/projects/p1/data': ok({ data: { mount: '/data', size: 0, folders: [] } }) })
    expect(await screen.findByRole('button', { name: 'Download data' })).toBeDisabled()
    expect(screen.getByRole('button', { name: 'Restore from file' })).toBeDisabled()
  })

  it('labels folders', () => {
    expect(dataFolderLabel('production')).toBe('Production')
    expect(dataFolderLabel('preview-shop--pr-3')).toBe('Preview shop--pr-3')
  })
})
