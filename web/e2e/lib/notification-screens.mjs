// Screenshots of the dashboard with data, the bell's dropdown and the
// notifications page. The dashboard and notifications answers are replaced
// in the page (page.route) with realistic data, timed relative to now so the
// relative times read naturally; journeys/05-notifications.mjs covers the
// real flow.
const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR
const ago = (ms) => new Date(Date.now() - ms).toISOString()

function liveURL(page, sub) {
  const u = new URL(page.url())
  return `${u.protocol}//${sub}.localhost${u.port ? `:${u.port}` : ''}`
}

function dashboard(page) {
  return {
    stats: { totalProjects: 3, activeDeployments: 2, totalDeployments: 14, failedDeployments: 2, thisMonth: 6 },
    recentProjects: [
      { id: 'p-thesis', name: 'Thesis API', type: 'flask', status: 'failed', lastDeployed: ago(12 * MIN), url: null },
      { id: 'p-recipes', name: 'Recipe Finder', type: 'vue', status: 'deployed', lastDeployed: ago(5 * HOUR), url: liveURL(page, 'recipe-finder') },
      { id: 'demo-project', name: 'Portfolio', type: 'react', status: 'deployed', lastDeployed: ago(2 * DAY), url: liveURL(page, 'portfolio') },
      { id: 'p-club', name: 'Chess Club Website', type: 'static', status: 'draft', lastDeployed: null, url: null },
    ],
    recentDeployments: [
      { id: 'dep-thesis', projectName: 'Thesis API', subdomain: 'thesis-api', status: 'failed', buildTime: 18_400, deployedAt: ago(12 * MIN) },
      { id: 'dep-recipes-2', projectName: 'Recipe Finder', subdomain: 'recipe-finder', status: 'building', buildTime: null, deployedAt: ago(MIN) },
      { id: 'dep-recipes', projectName: 'Recipe Finder', subdomain: 'recipe-finder', status: 'live', buildTime: 41_600, deployedAt: ago(5 * HOUR) },
      { id: 'demo-deployment', projectName: 'Portfolio', subdomain: 'portfolio', status: 'live', buildTime: 23_100, deployedAt: ago(2 * DAY) },
      { id: 'dep-2', projectName: 'Portfolio', subdomain: 'portfolio', status: 'stopped', buildTime: 25_900, deployedAt: ago(3 * DAY) },
    ],
  }
}

function notifications(page) {
  const list = [
    {
      _id: 'n1',
      type: 'error',
      title: 'Deployment failed',
      message: 'Thesis API failed: pip install exited with code 1',
      read: false,
      actionUrl: '/deployments/dep-thesis',
      createdAt: ago(12 * MIN),
    },
    {
      _id: 'n2',
      type: 'success',
      title: 'Deployment live',
      message: `Recipe Finder is live at ${liveURL(page, 'recipe-finder')}.`,
      read: false,
      actionUrl: '/deployments/dep-recipes',
      createdAt: ago(5 * HOUR),
    },
    {
      _id: 'n3',
      type: 'project',
      title: 'Project created',
      message: 'Recipe Finder is ready to deploy from maya-chen/recipe-finder.',
      read: true,
      actionUrl: '/projects/p-recipes',
      createdAt: ago(5 * HOUR + 4 * MIN),
    },
    {
      _id: 'n4',
      type: 'warning',
      title: 'GitHub access revoked',
      message:
        "GitHub no longer accepts Gantry's access to @maya-chen, so it was disconnected. Connect again to build private repositories.",
      read: false,
      actionUrl: '/github-integration',
      createdAt: ago(2 * DAY),
    },
    {
      _id: 'n5',
      type: 'error',
      title: 'App stopped after repeated crashes',
      message:
        'Portfolio crashed 5 times in a row and was stopped: exited with code 1. Check its runtime logs, then restart or deploy a fix.',
      read: true,
      actionUrl: '/deployments/demo-deployment',
      createdAt: ago(3 * DAY),
    },
    {
      _id: 'n6',
      type: 'system',
      title: 'Welcome to Gantry',
      message: 'Hi Maya! Import a repository and it goes live on its own subdomain: start with a new project.',
      read: true,
      actionUrl: '/projects/new',
      createdAt: ago(12 * DAY),
    },
  ]
  return { notifications: list, unreadCount: list.filter((n) => !n.read).length, total: list.length }
}

const ok = (data) => ({ status: 200, json: { success: true, data } })

/** Answers the dashboard and notifications API in the page with the data above, then reloads. */
async function withData(page, { dashboardAnswer } = {}) {
  await page.route(
    (url) => url.pathname === '/api/dashboard' || url.pathname.startsWith('/api/notifications'),
    async (route) => {
      const url = new URL(route.request().url())
      const method = route.request().method()
      if (url.pathname === '/api/dashboard') return route.fulfill(dashboardAnswer ?? ok(dashboard(page)))
      if (method === 'GET' && url.pathname === '/api/notifications') return route.fulfill(ok(notifications(page)))
      return route.fulfill(ok({ unreadCount: 0 }))
    },
  )
  await page.reload()
  await page.locator('main h1').first().waitFor()
}

export const NOTIFICATION_SCREENS = [
  {
    name: 'dashboard-data',
    path: '/dashboard',
    auth: true,
    ready: (page) => page.locator('main h1').first().waitFor(),
    act: async (page) => {
      await withData(page)
      await page.getByRole('link', { name: 'Chess Club Website' }).waitFor()
      await page.getByTestId('notification-badge').waitFor()
    },
  },
  {
    name: 'dashboard-error',
    path: '/dashboard',
    auth: true,
    ready: (page) => page.locator('main h1').first().waitFor(),
    act: async (page) => {
      await withData(page, { dashboardAnswer: { status: 500, json: { success: false, message: 'Internal error.' } } })
      await page.getByRole('alert').filter({ hasText: 'Failed to load dashboard data' }).waitFor({ timeout: 8000 })
    },
  },
  {
    name: 'notifications-bell',
    path: '/dashboard',
    auth: true,
    full: false,
    ready: (page) => page.locator('main h1').first().waitFor(),
    act: async (page) => {
      await withData(page)
      await page.getByRole('button', { name: /^Notifications, 3 unread/ }).click()
      await page.getByRole('dialog', { name: 'Notifications' }).getByText('Deployment failed').waitFor()
    },
  },
  {
    name: 'notifications-list',
    path: '/notifications',
    auth: true,
    ready: (page) => page.locator('main h1').first().waitFor(),
    act: async (page) => {
      await withData(page)
      await page.getByRole('list', { name: 'Notifications' }).getByText('Welcome to Gantry').waitFor()
    },
  },
  {
    name: 'notifications-clear',
    path: '/notifications',
    auth: true,
    full: false,
    ready: (page) => page.locator('main h1').first().waitFor(),
    act: async (page) => {
      await withData(page)
      await page.getByRole('button', { name: 'Clear all' }).click()
      await page.getByRole('dialog', { name: 'Clear all notifications?' }).waitFor()
    },
  },
]
