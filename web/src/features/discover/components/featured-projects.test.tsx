import { render, screen } from '@testing-library/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import userEvent from '@testing-library/user-event'
import { MemoryRouter } from 'react-router'
import { describe, expect, it, vi } from 'vitest'
import { fail, mockApi, ok } from '@/test/utils'
import { FeaturedProjects } from './featured-projects'

function renderFeatured() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } })
  return render(
    <QueryClientProvider client={client}>
      <MemoryRouter>
        <FeaturedProjects />
      </MemoryRouter>
    </QueryClientProvider>,
  )
}

const deployment = (i: number) => ({
  _id: `d${i}`,
  url: `http://app${i}.localhost:8080`,
  createdAt: new Date(Date.now() - i * 3600_000).toISOString(),
  project: { name: `App ${i}`, description: `Description ${i}`, type: 'react' },
  user: { fullName: `Student ${i}`, username: `student${i}` },
})

describe('featured projects', () => {
  it('asks for the three newest public deployments and shows them', async () => {
    const { fetchMock, calls } = mockApi({
      'GET /api/deployments/public': ok({ deployments: [1, 2, 3, 4].map(deployment) }),
      'POST /api/deployments/public/d1/view': ok({}),
    })
    renderFeatured()
    expect(await screen.findByText('App 1')).toBeInTheDocument()
    expect(String(fetchMock.mock.calls[0][0])).toBe('/api/deployments/public?limit=3&sort=recent')
    expect(screen.getAllByRole('listitem')).toHaveLength(3)
    expect(screen.getByText('Description 2')).toBeInTheDocument()
    expect(screen.getByText('Student 1')).toBeInTheDocument()
    expect(screen.getByText('@student1')).toBeInTheDocument()
    expect(screen.getByText('1h ago')).toBeInTheDocument()
    const visit = screen.getAllByRole('link', { name: /visit app/i })[0]
    expect(visit).toHaveAttribute('href', 'http://app1.localhost:8080')
    expect(visit).toHaveAttribute('target', '_blank')
    visit.addEventListener('click', (e) => e.preventDefault())
    await userEvent.click(visit)
    expect(calls.some((c) => c.method === 'POST' && c.path === '/api/deployments/public/d1/view')).toBe(true)
  })

  it('falls back to the empty state when the fetch fails, and only logs it', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    mockApi({ 'GET /api/deployments/public': fail(404, 'Not found') })
    renderFeatured()
    expect(await screen.findByText('No featured projects yet')).toBeInTheDocument()
    expect(warn).toHaveBeenCalled()
  })
})
