// Screenshots of Discover and the landing page's featured projects with a
// realistic gallery: GET /api/deployments/public is answered in the page
// (page.route) by a small fake of the server that searches, filters, sorts
// and counts the apps below. The real flow is journeys/06-discover.mjs.
const HOUR = 3_600_000
const DAY = 24 * HOUR

// [name, description, type, full name, username, age, views, likes, liked]
const APPS = [
  ['Pixel Garden', 'Track your houseplants, get watering reminders and share photos of new leaves', 'react', 'Maya Chen', 'maya-chen', 2 * HOUR, 1520, 214, true],
  ['Campus Weather', 'Hyper-local forecasts for every building on campus, from the roof sensors', 'vue', 'Omar Haddad', 'omarh', 3 * DAY, 892, 131, false],
  ['Flashcard Forge', 'Spaced-repetition flashcards generated from your lecture notes', 'nextjs', 'Lena Vogel', 'lenav', 6 * DAY, 2310, 388, false],
  ['Study Buddy API', 'REST API that matches classmates for study sessions by course and time', 'python', 'Tomás Ruiz', 'truiz', 9 * DAY, 340, 57, false],
  ['Chess Club', 'Static site of the university chess club: events, results and ratings', 'static', 'Aiko Tanaka', 'aiko', 12 * DAY, 615, 92, true],
  ['Budget Bites', 'Cheap, healthy recipes sorted by what a week of groceries costs', 'angular', 'Priya Nair', 'priyan', 15 * DAY, 1204, 176, false],
  ['Dorm Chat', 'Websocket chat rooms for every floor of the residence halls', 'nodejs', 'Jonas Berg', 'jberg', 20 * HOUR, 188, 23, false],
  ['Thesis Timeline', 'A one-page timeline of my master thesis, milestone by milestone', 'static', 'Lena Vogel', 'lenav', 35 * DAY, 97, 12, false],
  ['Snake in 1 KB', 'The classic game in under a kilobyte of vanilla JavaScript', 'vanilla', 'Sam Okafor', 'samo', 50 * DAY, 4120, 530, false],
  ['Lab Booking', 'Reserve lab benches and equipment without the spreadsheet', 'react', 'Omar Haddad', 'omarh', 4 * DAY, 256, 31, false],
  ['Transit Now', 'Next departures for the three bus lines that serve campus', 'vue', 'Aiko Tanaka', 'aiko', 8 * DAY, 730, 64, false],
  ['Poetry Engine', '', 'flask', 'Maya Chen', 'maya-chen', 70 * DAY, 45, 3, false],
]

const CATEGORIES = {
  frontend: ['react', 'vue', 'angular', 'nextjs'],
  backend: ['python', 'nodejs'],
  static: ['static'],
}

function gallery(page) {
  const now = Date.now()
  const u = new URL(page.url())
  return APPS.map(([name, description, type, fullName, username, age, views, likeCount, liked], i) => {
    const sub = name.toLowerCase().replace(/[^a-z0-9]+/g, '-')
    return {
      _id: `app-${i}`,
      url: `${u.protocol}//${sub}.localhost${u.port ? `:${u.port}` : ''}`,
      createdAt: new Date(now - age).toISOString(),
      project: { name, description, type },
      user: { fullName, username },
      views,
      likeCount,
      liked,
      // Two server apps asleep after going unused (their cards send a wake hint).
      sleeping: type === 'python' || type === 'nodejs',
    }
  })
}

/** The server's answer to one list call, computed from the apps above. */
function answer(page, params) {
  const search = (params.get('search') ?? '').toLowerCase()
  const category = params.get('category') ?? 'all'
  const sort = params.get('sort') ?? 'recent'
  const limit = Number(params.get('limit') ?? 24)
  const pageNo = Number(params.get('page') ?? 1)
  const all = gallery(page)
  const matches = all.filter((a) =>
    [a.project.name, a.project.description, a.user.fullName, a.user.username].join('\n').toLowerCase().includes(search),
  )
  const inCategory = (a, c) => c === 'all' || CATEGORIES[c]?.includes(a.project.type)
  const days = (a) => (Date.now() - Date.parse(a.createdAt)) / DAY
  const score = (a) => 0.4 * a.views + 0.6 * a.likeCount + 0.1 * days(a)
  const order = {
    recent: (a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt),
    oldest: (a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt),
    name: (a, b) => a.project.name.toLowerCase().localeCompare(b.project.name.toLowerCase()),
    popular: (a, b) => b.likeCount - a.likeCount || b.views - a.views,
    trending: (a, b) => score(b) - score(a),
  }[sort]
  const list = matches.filter((a) => inCategory(a, category)).sort(order)
  const offset = (pageNo - 1) * limit
  return {
    deployments: list.slice(offset, offset + limit),
    total: list.length,
    page: pageNo,
    limit,
    offset,
    hasMore: offset + limit < list.length,
    stats: { apps: all.length, developers: new Set(all.map((a) => a.user.username)).size },
    categories: Object.fromEntries(
      ['all', 'frontend', 'backend', 'static'].map((c) => [c, matches.filter((a) => inCategory(a, c)).length]),
    ),
  }
}

/** Answers the gallery in the page with the apps above, then reloads it. */
async function withGallery(page) {
  await page.route(
    (url) => url.pathname === '/api/deployments/public',
    (route) =>
      route.fulfill({
        status: 200,
        json: { success: true, data: answer(page, new URL(route.request().url()).searchParams) },
      }),
  )
  // The wake hints of the sleeping apps' cards.
  await page.route(
    (url) => /^\/api\/deployments\/public\/[^/]+\/wake$/.test(url.pathname),
    (route) => route.fulfill({ status: 200, json: { success: true, data: { waking: true } } }),
  )
  await page.reload()
}

const h1 = (page) => page.getByRole('heading', { level: 1, name: 'Discover' }).waitFor()

export const DISCOVER_SCREENS = [
  {
    name: 'discover-visitor',
    path: '/discover',
    ready: h1,
    act: async (page) => {
      await withGallery(page)
      await page.getByText('Showing 12 of 12 apps').waitFor()
    },
  },
  {
    name: 'discover',
    path: '/discover',
    auth: true,
    ready: h1,
    act: async (page) => {
      await withGallery(page)
      await page.getByText('Showing 12 of 12 apps').waitFor()
    },
  },
  {
    name: 'discover-trending',
    path: '/discover?sort=trending&category=frontend',
    auth: true,
    ready: h1,
    act: async (page) => {
      await withGallery(page)
      await page.getByRole('heading', { name: 'Trending This Week' }).waitFor()
    },
  },
  {
    name: 'discover-search',
    path: '/discover?search=lena',
    ready: h1,
    act: async (page) => {
      await withGallery(page)
      await page.getByText('Showing 2 of 2 apps').waitFor()
    },
  },
  {
    name: 'discover-empty',
    path: '/discover?search=quantum%20compiler',
    ready: h1,
    act: async (page) => {
      await withGallery(page)
      await page.getByText('No apps found').waitFor()
    },
  },
  {
    name: 'landing-featured',
    path: '/',
    ready: (page) => page.getByRole('heading', { level: 1 }).first().waitFor(),
    act: async (page) => {
      await withGallery(page)
      await page.getByRole('heading', { name: 'Featured Student Projects' }).waitFor()
      await page.getByText('Pixel Garden').waitFor()
      // The sticky header would cover the section once it is scrolled to.
      await page.addStyleTag({ content: 'header { position: static !important; }' })
    },
    element: (page) => page.locator('section[aria-labelledby="featured-title"]'),
  },
]
