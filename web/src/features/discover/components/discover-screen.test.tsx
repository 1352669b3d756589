import { act, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { fail, mockApi, ok, renderApp, testUser, type FakeHandler } from '@/test/utils'

const HOUR = 3600_000
const DAY = 24 * HOUR

type Fixture = {
  id: string
  name: string
  type: string
  author: [string, string]
  age: number
  views?: number
  likes?: number
  liked?: boolean
  description?: string
}

const app = (f: Fixture) => ({
  _id: f.id,
  url: `http://${f.id}.localhost:8080`,
  createdAt: new Date(Date.now() - f.age).toISOString(),
  project: { name: f.name, description: f.description ?? `About ${f.name}`, type: f.type },
  user: { fullName: f.author[0], username: f.author[1] },
  views: f.views ?? 0,
  likeCount: f.likes ?? 0,
  liked: f.liked ?? false,
})

const APPS = [
  app({ id: 'a1', name: 'Pixel Garden', type: 'react', author: ['Ada Lovelace', 'ada'], age: 2 * HOUR, views: 1520, likes: 4 }),
  app({ id: 'a2', name: 'Weather Now', type: 'vue', author: ['Grace Hopper', 'grace'], age: 3 * DAY, views: 10, likes: 7, liked: true }),
  app({ id: 'a3', name: 'Flask API', type: 'python', author: ['Linus Torvalds', 'linus'], age: 45 * DAY, views: 3 }),
  app({ id: 'a4', name: 'Portfolio', type: 'static', author: ['Ada Lovelace', 'ada'], age: 30 * 1000 }),
]

type Page = { deployments?: unknown[]; total?: number; page?: number; hasMore?: boolean }

const page = ({ deployments = APPS, total = deployments.length, page = 1, hasMore = false }: Page = {}) =>
  ok({
    deployments,
    total,
    page,
    limit: 24,
    offset: (page - 1) * 24,
    hasMore,
    stats: { apps: 42, developers: 17 },
    categories: { all: 42, frontend: 20, backend: 9, static: 8 },
  })

/** A fake gallery that records the query of every list call. */
function gallery(list: FakeHandler = page(), extra: Record<string, FakeHandler> = {}) {
  const queries: URLSearchParams[] = []
  const api = mockApi({
    'GET /api/deployments/public': (req) => {
      queries.push(req.url.searchParams)
      return typeof list === 'function' ? list(req) : list
    },
    ...extra,
  })
  return { ...api, queries }
}

const cards = () => screen.getAllByTestId('app-card')
const card = (name: string) => cards().find((c) => within(c).queryByRole('heading', { name }))!

beforeEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
})

describe('Discover', () => {
  it('shows the counts, chips and app cards to a visitor, in the public layout', async () => {
    const { queries } = gallery()
    renderApp('/discover')
    expect(await screen.findByRole('heading', { level: 1, name: 'Discover' })).toBeInTheDocument()
    expect(await screen.findByText('42 live apps')).toBeInTheDocument()
    expect(screen.getByText('17 developers')).toBeInTheDocument()
    expect(screen.getAllByRole('link', { name: 'Sign In' }).length).toBeGreaterThan(0)
    expect(screen.queryByRole('button', { name: 'Account menu' })).not.toBeInTheDocument()

    const chips = screen.getByRole('group', { name: 'Categories' })
    expect(within(chips).getAllByRole('button').map((b) => b.textContent)).toEqual([
      'All Apps42',
      'Frontend20',
      'Backend9',
      'Static Sites8',
    ])
    expect(within(chips).getByRole('button', { name: /All Apps/ })).toHaveAttribute('aria-pressed', 'true')

    expect(cards()).toHaveLength(4)
    const garden = card('Pixel Garden')
    expect(within(garden).getByRole('img', { name: 'React app' })).toBeInTheDocument()
    expect(within(garden).getByText('Ada Lovelace')).toBeInTheDocument()
    expect(within(garden).getByText('@ada')).toBeInTheDocument()
    expect(within(garden).getByText('React')).toBeInTheDocument()
    expect(within(garden).getByText('1.5K')).toBeInTheDocument()
    expect(within(garden).getByTestId('like-count')).toHaveTextContent('4')
    expect(within(garden).getByText('2h ago')).toBeInTheDocument()
    expect(within(card('Weather Now')).getByText('3d ago')).toBeInTheDocument()
    expect(within(card('Flask API')).getByText('1mo ago')).toBeInTheDocument()
    expect(within(card('Portfolio')).getByText('Just now')).toBeInTheDocument()
    expect(within(card('Portfolio')).getByRole('img', { name: 'Static app' })).toBeInTheDocument()
    expect(screen.getByText('Showing 4 of 4 apps')).toBeInTheDocument()
    expect(screen.queryByRole('button', { name: 'Load more' })).not.toBeInTheDocument()
    expect(screen.queryByText('Trending This Week')).not.toBeInTheDocument()

    expect(queries).toHaveLength(1)
    expect(Object.fromEntries(queries[0])).toEqual({ sort: 'recent', limit: '24', page: '1' })
  })

  it('shows signed-in users the same screen in the app layout', async () => {
    gallery(page(), { 'GET /api/auth/me': ok({ user: testUser }) })
    renderApp('/discover', { user: testUser })
    expect(await screen.findByRole('heading', { level: 1, name: 'Discover' })).toBeInTheDocument()
    expect(await screen.findByText('Pixel Garden')).toBeInTheDocument()
    expect(screen.getByRole('button', { name: 'Account menu' })).toBeInTheDocument()
  })

  it('searches on the server once typing pauses', async () => {
    const { queries } = gallery((req) =>
      req.url.searchParams.get('search') === 'garden' ? page({ deployments: [APPS[0]] }) : page(),
    )
    const { router } = renderApp('/discover')
    await screen.findByText('Weather Now')
    await userEvent.type(screen.getByRole('searchbox', { name: 'Search apps' }), 'garden')
    await waitFor(() => expect(screen.queryByText('Weather Now')).not.toBeInTheDocument())
    expect(screen.getByText('Pixel Garden')).toBeInTheDocument()
    expect(screen.getByText('Showing 1 of 1 app')).toBeInTheDocument()
    // One search for the whole word, not one per keystroke.
    expect(queries.map((q) => q.get('search'))).toEqual([null, 'garden'])
    expect(router.state.location.search).toBe('?search=garden')
  })

  it('filters by category and sorts on the server', async () => {
    const { queries } = gallery()
    const { router } = renderApp('/discover')
    await screen.findByText('Pixel Garden')
    await userEvent.click(screen.getByRole('button', { name: /Backend/ }))
    await waitFor(() => expect(queries.at(-1)?.get('category')).toBe('backend'))
    expect(screen.getByRole('button', { name: /Backend/ })).toHaveAttribute('aria-pressed', 'true')
    expect(screen.getByRole('button', { name: /All Apps/ })).toHaveAttribute('aria-pressed', 'false')

    const select = screen.getByRole('combobox', { name: 'Sort by' })
    expect(Array.from((select as HTMLSelectElement).options).map((o) => o.text)).toEqual([
      'Recent',
      'Oldest',
      'Name',
      'Popular',
      'Trending',
    ])
    for (const sort of ['oldest', 'name', 'popular']) {
      await userEvent.selectOptions(select, sort)
      await waitFor(() => expect(queries.at(-1)?.get('sort')).toBe(sort))
      expect(queries.at(-1)?.get('category')).toBe('backend')
    }
    expect(router.state.location.search).toBe('?category=backend&sort=popular')
  })

  it('shows the top three in "Trending This Week" when sorted by trending', async () => {
    gallery()
    renderApp('/discover?sort=trending')
    const strip = await screen.findByRole('region', { name: 'Trending This Week' })
    const items = within(strip).getAllByRole('listitem')
    expect(items.map((li) => li.textContent)).toEqual([
      expect.stringContaining('Pixel Garden'),
      expect.stringContaining('Weather Now'),
      expect.stringContaining('Flask API'),
    ])
    expect(within(items[0]).getByRole('link')).toHaveAttribute('href', 'http://a1.localhost:8080')
    expect(screen.getByRole('combobox', { name: 'Sort by' })).toHaveValue('trending')
  })

  it('likes at once and keeps the server’s count', async () => {
    let release: () => void = () => {}
    const answered = new Promise<void>((resolve) => (release = resolve))
    const { calls } = gallery(page(), {
      'POST /api/deployments/public/a1/like': { ...ok({ likeCount: 9, liked: true }), delay: 0 },
      'POST /api/deployments/public/a2/like': ok({ likeCount: 6, liked: false }),
    })
    // Hold the first like's answer until the test has seen the optimistic count.
    const fetchMock = vi.mocked(fetch)
    const original = fetchMock.getMockImplementation()!
    fetchMock.mockImplementation(async (input, init) => {
      if (String(input).endsWith('/a1/like')) await answered
      return original(input, init)
    })
    renderApp('/discover')
    await screen.findByText('Pixel Garden')

    const garden = card('Pixel Garden')
    await userEvent.click(within(garden).getByRole('button', { name: 'Like Pixel Garden' }))
    expect(within(garden).getByTestId('like-count')).toHaveTextContent('5')
    expect(within(garden).getByRole('button', { name: 'Unlike Pixel Garden' })).toHaveAttribute('aria-pressed', 'true')
    await act(async () => release())
    await waitFor(() => expect(within(card('Pixel Garden')).getByTestId('like-count')).toHaveTextContent('9'))

    // Taking a like back.
    const weather = card('Weather Now')
    await userEvent.click(within(weather).getByRole('button', { name: 'Unlike Weather Now' }))
    await waitFor(() => expect(within(card('Weather Now')).getByTestId('like-count')).toHaveTextContent('6'))
    expect(within(card('Weather Now')).getByRole('button', { name: 'Like Weather Now' })).toHaveAttribute(
      'aria-pressed',
      'false',
    )
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual([
      '/api/deployments/public/a1/like',
      '/api/deployments/public/a2/like',
    ])
  })

  it('puts the like back and only logs when liking fails', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    gallery(page(), { 'POST /api/deployments/public/a1/like': fail(404, 'App not found') })
    renderApp('/discover')
    await screen.findByText('Pixel Garden')
    await userEvent.click(screen.getByRole('button', { name: 'Like Pixel Garden' }))
    await waitFor(() => expect(warn).toHaveBeenCalledWith('Could not like the app:', expect.anything()))
    expect(within(card('Pixel Garden')).getByTestId('like-count')).toHaveTextContent('4')
    expect(screen.getByRole('button', { name: 'Like Pixel Garden' })).toHaveAttribute('aria-pressed', 'false')
    expect(screen.queryByRole('status', { name: /App not found/ })).not.toBeInTheDocument()
    expect(screen.queryByText('App not found')).not.toBeInTheDocument()
  })

  it('records the visit and opens the live site in a new tab', async () => {
    const { calls } = gallery(page(), { 'POST /api/deployments/public/a3/view': ok({ counted: true }) })
    renderApp('/discover')
    await screen.findByText('Flask API')
    const visit = within(card('Flask API')).getByRole('link', { name: /Visit App/ })
    expect(visit).toHaveAttribute('href', 'http://a3.localhost:8080')
    expect(visit).toHaveAttribute('target', '_blank')
    expect(visit).toHaveAttribute('rel', 'noopener noreferrer')
    visit.addEventListener('click', (e) => e.preventDefault())
    await userEvent.click(visit)
    await waitFor(() => expect(within(card('Flask API')).getByText('4')).toBeInTheDocument())
    expect(calls.some((c) => c.method === 'POST' && c.path === '/api/deployments/public/a3/view')).toBe(true)
  })

  it('loads more apps page by page', async () => {
    const many = Array.from({ length: 30 }, (_, i) =>
      app({ id: `m${i}`, name: `App ${i}`, type: 'react', author: ['Ada Lovelace', 'ada'], age: i * HOUR }),
    )
    const { queries } = gallery((req) =>
      req.url.searchParams.get('page') === '2'
        ? page({ deployments: many.slice(24), total: 30, page: 2 })
        : page({ deployments: many.slice(0, 24), total: 30, hasMore: true }),
    )
    renderApp('/discover')
    expect(await screen.findByText('Showing 24 of 30 apps')).toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Load more' }))
    expect(await screen.findByText('Showing 30 of 30 apps')).toBeInTheDocument()
    expect(cards()).toHaveLength(30)
    expect(screen.queryByRole('button', { name: 'Load more' })).not.toBeInTheDocument()
    expect(queries.map((q) => q.get('page'))).toEqual(['1', '2'])
  })

  it('says "No apps found" and clears the search', async () => {
    const { queries } = gallery((req) =>
      req.url.searchParams.get('search') ? page({ deployments: [] }) : page(),
    )
    const { router } = renderApp('/discover?search=zzz&category=static')
    expect(await screen.findByText('No apps found')).toBeInTheDocument()
    expect(screen.getByRole('searchbox', { name: 'Search apps' })).toHaveValue('zzz')
    await userEvent.click(screen.getByRole('button', { name: 'Clear search' }))
    expect(await screen.findByText('Pixel Garden')).toBeInTheDocument()
    expect(screen.getByRole('searchbox', { name: 'Search apps' })).toHaveValue('')
    expect(router.state.location.search).toBe('')
    expect(Object.fromEntries(queries.at(-1)!)).toEqual({ sort: 'recent', limit: '24', page: '1' })
  })

  it('shows an empty list and only logs when loading fails', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    gallery(fail(500, 'Internal error.'))
    renderApp('/discover')
    expect(await screen.findByText('No apps found')).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Deploy your app' })).toHaveAttribute('href', '/register')
    expect(screen.getByText('0 live apps')).toBeInTheDocument()
    expect(warn).toHaveBeenCalledWith('Could not load the apps of Discover:', expect.anything())
    expect(screen.queryByText('Internal error.')).not.toBeInTheDocument()
  })
})
