import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { makeProject } from '@/test/fixtures'
import { mockApi, ok, fail, renderApp, testUser, type FakeHandler } from '@/test/utils'
import { DOMAINS_POLL_MS, domainsQueryOptions } from '../api/get-domains'
import { domainNameError } from '../schemas'
import type { Domain } from '../types'

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

function makeDomain(overrides: Partial<Domain> = {}): Domain {
  return {
    _id: 'dom1',
    project: 'p1',
    name: 'www.example.com',
    apex: false,
    primary: true,
    redirect: 'none',
    verificationToken: 'gantry-verify=abc123',
    status: 'waiting_dns',
    error: '',
    nextCheckAt: '2026-03-04T10:00:00Z',
    attempts: 0,
    verifiedAt: null,
    createdAt: '2026-03-04T10:00:00Z',
    records: [
      { type: 'CNAME', name: 'www.example.com', value: 'portfolio-site.localhost' },
      { type: 'TXT', name: '_gantry-challenge.www.example.com', value: 'gantry-verify=abc123' },
    ],
    ...overrides,
  }
}

function setup(domains: Domain[] | (() => Domain[]), handlers: Record<string, FakeHandler> = {}) {
  const api = mockApi({
    'GET /api/auth/me': ok({ user: testUser }),
    'GET /api/projects/p1': ok({ project: makeProject({ subdomain: 'portfolio-site' }) }),
    'GET /api/projects/p1/domains': () => ok({ domains: typeof domains === 'function' ? domains() : domains }),
    ...handlers,
  })
  return { ...api, ...renderApp('/projects/p1', { user: testUser }) }
}

async function card() {
  const heading = await screen.findByRole('heading', { name: 'Domains' })
  return heading.closest('.mb-6') as HTMLElement
}

describe('Domains card', () => {
  it('shows the Gantry URL and an empty list', async () => {
    setup([])
    const c = await card()
    expect(await within(c).findByText('No custom domains yet. Add one you own, such as www.example.com.')).toBeInTheDocument()
    expect(within(c).getByText('Gantry URL')).toBeInTheDocument()
    expect(within(c).getByRole('link', { name: /portfolio-site\./ })).toBeInTheDocument()
  })

  it('shows a waiting domain with its records to copy', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined)
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true })
    setup([makeDomain({ error: 'The TXT record _gantry-challenge.www.example.com was not found' })])
    const item = await screen.findByTestId('domain-item')
    expect(within(item).getAllByText('www.example.com')[0]).toHaveClass('font-mono')
    expect(within(item).getByText('Waiting for DNS')).toBeInTheDocument()
    expect(within(item).getByText('Primary')).toBeInTheDocument()
    expect(within(item).getByText('The TXT record _gantry-challenge.www.example.com was not found')).toBeInTheDocument()
    const table = within(item).getByRole('table') // (phones get the same records as a list)
    for (const h of ['Type', 'Name', 'Value']) expect(within(table).getByRole('columnheader', { name: h })).toBeInTheDocument()
    expect(within(table).getByText('portfolio-site.localhost')).toBeInTheDocument()
    await userEvent.click(within(table).getByRole('button', { name: 'Copy TXT value' }))
    expect(writeText).toHaveBeenCalledWith('gantry-verify=abc123')
    expect(within(item).getByRole('button', { name: 'Check now' })).toBeInTheDocument()
    expect(within(item).queryByRole('button', { name: 'Set primary' })).not.toBeInTheDocument()
  })

  it('shows each status and the reason of an error', async () => {
    setup([
      makeDomain({ _id: 'a', name: 'a.example.com', status: 'verified' }),
      makeDomain({ _id: 'b', name: 'b.example.com', status: 'certificate_issued', primary: false }),
      makeDomain({
        _id: 'c',
        name: 'c.example.com',
        status: 'error',
        primary: false,
        error: 'c.example.com points to other.host, not portfolio-site.localhost',
      }),
    ])
    const items = await screen.findAllByTestId('domain-item')
    expect(within(items[0]).getByText('Verified')).toBeInTheDocument()
    expect(within(items[0]).queryByRole('table')).not.toBeInTheDocument()
    expect(within(items[0]).getByRole('link', { name: 'a.example.com' })).toBeInTheDocument()
    expect(within(items[1]).getByText('Certificate issued')).toBeInTheDocument()
    expect(within(items[2]).getByText('Error')).toBeInTheDocument()
    expect(within(items[2]).getByText('What to fix:')).toBeInTheDocument()
    expect(within(items[2]).getByText('c.example.com points to other.host, not portfolio-site.localhost')).toBeInTheDocument()
  })

  it('validates and adds a domain', async () => {
    let list: Domain[] = []
    const { calls } = setup(() => list, {
      'POST /api/projects/p1/domains': (req) => {
        list = [makeDomain({ name: (req.body as { name: string }).name })]
        return { status: 201, body: { success: true, data: { domain: list[0] } } }
      },
    })
    const c = await card()
    const field = within(c).getByLabelText('Add a domain')
    await userEvent.click(within(c).getByRole('button', { name: 'Add' }))
    expect(within(c).getByText('Domain is required')).toBeInTheDocument()
    await userEvent.type(field, 'https://example.com/')
    await userEvent.click(within(c).getByRole('button', { name: 'Add' }))
    expect(
      within(c).getByText('Enter the domain name alone, such as www.example.com (no https:// and no path)'),
    ).toBeInTheDocument()
    expect(calls.some((x) => x.method === 'POST')).toBe(false)
    await userEvent.clear(field)
    await userEvent.type(field, ' www.example.com ')
    await userEvent.click(within(c).getByRole('button', { name: 'Add' }))
    await waitFor(() => expect(calls.some((x) => x.method === 'POST' && x.path === '/api/projects/p1/domains')).toBe(true))
    expect(calls.find((x) => x.method === 'POST')!.body).toEqual({ name: 'www.example.com' })
    expect(await screen.findByTestId('domain-item')).toBeInTheDocument()
    expect(field).toHaveValue('')
  })

  it("shows the server's message when adding fails", async () => {
    setup([], {
      'POST /api/projects/p1/domains': fail(403, 'Your Free plan allows 1 custom domain per project. Upgrade to add more.'),
    })
    const c = await card()
    await userEvent.type(within(c).getByLabelText('Add a domain'), 'www.two.example')
    await userEvent.click(within(c).getByRole('button', { name: 'Add' }))
    expect(await screen.findByText('Your Free plan allows 1 custom domain per project. Upgrade to add more.')).toBeInTheDocument()
  })

  it('removes a domain after confirming, and sets another primary', async () => {
    const { calls } = setup(
      [makeDomain(), makeDomain({ _id: 'dom2', name: 'blog.example.com', primary: false })],
      {
        'DELETE /api/projects/p1/domains/dom1': ok({ deleted: true }),
        'POST /api/projects/p1/domains/dom2/primary': ok({ domain: makeDomain({ _id: 'dom2', name: 'blog.example.com' }) }),
      },
    )
    const items = await screen.findAllByTestId('domain-item')
    await userEvent.click(within(items[1]).getByRole('button', { name: 'Set primary' }))
    await waitFor(() => expect(calls.some((x) => x.path === '/api/projects/p1/domains/dom2/primary')).toBe(true))
    await userEvent.click(within(items[0]).getByRole('button', { name: 'Remove www.example.com' }))
    const dialog = await screen.findByRole('dialog')
    expect(within(dialog).getByText('Remove www.example.com? The platform stops serving your site on it at once.')).toBeInTheDocument()
    await userEvent.click(within(dialog).getByRole('button', { name: 'Remove' }))
    await waitFor(() => expect(calls.some((x) => x.method === 'DELETE')).toBe(true))
  })

  it('offers the apex ↔ www redirect once both are added', async () => {
    const { calls } = setup(
      [
        makeDomain({ _id: 'apex', name: 'example.com', apex: true, status: 'verified' }),
        makeDomain({ _id: 'www', name: 'www.example.com', primary: false, status: 'verified' }),
      ],
      { 'PUT /api/projects/p1/domains/apex': ok({ domain: makeDomain({ _id: 'apex', redirect: 'to-www' }) }) },
    )
    const items = await screen.findAllByTestId('domain-item')
    await userEvent.selectOptions(within(items[0]).getByLabelText('Redirect'), 'to-www')
    await waitFor(() => expect(calls.find((x) => x.method === 'PUT')?.body).toEqual({ redirect: 'to-www' }))
  })
})

describe('domain rules', () => {
  it('refuses what the server refuses', () => {
    expect(domainNameError('')).toBe('Domain is required')
    expect(domainNameError('192.0.2.1')).toBe('Domain must be a name, not an IP address')
    expect(domainNameError('*.example.com')).toBe(
      'Wildcard domains are not supported: add each name (such as www.example.com) on its own',
    )
    expect(domainNameError('localhost')).toBe('Domain needs at least two parts, such as example.com')
    expect(domainNameError('-bad.example.com')).toMatch(/^Each part/)
    expect(domainNameError('a'.repeat(250) + '.com')).toBe('Domain cannot exceed 253 characters')
    expect(domainNameError('bücher.example')).toBeNull()
    expect(domainNameError('www.example.com')).toBeNull()
  })

  it('polls only while a domain waits for DNS or for its certificate', () => {
    const interval = domainsQueryOptions('p1').refetchInterval as (q: { state: { data?: Domain[] } }) => number | false
    expect(interval({ state: { data: [makeDomain()] } })).toBe(DOMAINS_POLL_MS)
    expect(interval({ state: { data: [makeDomain({ status: 'verified' })] } })).toBe(DOMAINS_POLL_MS)
    expect(interval({ state: { data: [makeDomain({ status: 'certificate_issued' })] } })).toBe(false)
    expect(interval({ state: { data: [makeDomain({ status: 'error' })] } })).toBe(false)
    expect(interval({ state: { data: undefined } })).toBe(false)
  })
})
