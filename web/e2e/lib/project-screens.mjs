// Screenshots of the projects and deployments screens with realistic data:
// the API answers for these screens are replaced in the page (page.route),
// so every status, default and fallback shows without running builds. The
// real flow is covered by journeys/deploy.mjs.
const DAY = 86_400_000
const NOW = Date.UTC(2026, 2, 5, 14, 30)
const iso = (msAgo) => new Date(NOW - msAgo).toISOString()

function liveURL(page, sub) {
  const u = new URL(page.url())
  return `${u.protocol}//${sub}.localhost${u.port ? `:${u.port}` : ''}`
}

function projects(page) {
  const repo = (name, description, extra = {}) => ({
    id: `r-${name}`,
    name,
    fullName: `maya-chen/${name}`,
    description,
    defaultBranch: 'main',
    private: false,
    url: `https://github.com/maya-chen/${name}`,
    cloneUrl: `https://github.com/maya-chen/${name}.git`,
    lastCommit: {
      message: 'Add contact form and dark mode',
      author: 'Maya Chen',
      date: iso(2 * DAY),
      sha: '9f4c2e1a7b3d5f6e8a0c1b2d3e4f5a6b7c8d9e0f',
    },
    ...extra,
  })
  return [
    {
      _id: 'demo-project',
      name: 'Portfolio',
      description: 'My personal portfolio: projects, CV and contact page',
      status: 'deployed',
      type: 'react',
      repository: repo('portfolio', 'My personal portfolio'),
      branch: 'main',
      subdomain: 'portfolio',
      buildConfig: { installCommand: 'npm ci', buildCommand: 'npm run build', outputDirectory: 'dist' },
      showInDiscover: true,
      activeDeployment: { _id: 'demo-deployment', subdomain: 'portfolio', url: liveURL(page, 'portfolio') },
      deployments: [
        { _id: 'demo-deployment', version: '1.0.0', subdomain: 'portfolio', url: liveURL(page, 'portfolio'), status: 'live', createdAt: iso(2 * 3600_000) },
        { _id: 'dep-2', version: '1.0.0', subdomain: 'portfolio', url: liveURL(page, 'portfolio'), status: 'stopped', createdAt: iso(DAY) },
        { _id: 'dep-3', version: '1.0.0', subdomain: 'portfolio', url: liveURL(page, 'portfolio'), status: 'failed', createdAt: iso(2 * DAY) },
      ],
    },
    {
      _id: 'p-recipes',
      name: 'Recipe Finder',
      description: 'Search recipes by what is left in the fridge',
      status: 'building',
      type: 'vue',
      repository: repo('recipe-finder', ''),
      branch: 'develop',
      buildConfig: { installCommand: 'yarn install', buildCommand: 'yarn build', outputDirectory: 'dist' },
      activeDeployment: null,
      deployments: [],
    },
    {
      _id: 'p-thesis',
      name: 'Thesis API',
      description: '',
      status: 'failed',
      type: 'flask',
      repository: repo('thesis-api', '', { private: true }),
      branch: 'main',
      buildConfig: { installCommand: 'pip install -r requirements.txt', buildCommand: '', outputDirectory: '', startCommand: 'gunicorn app:app' },
      showInDiscover: false,
      activeDeployment: null,
      deployments: [],
    },
    {
      _id: 'p-quiz',
      name: 'Quiz API',
      description: 'Express API behind the weekly class quiz',
      status: 'deployed',
      sleeping: true,
      alwaysOn: false,
      type: 'nodejs',
      repository: repo('quiz-api', 'Express API for quizzes'),
      branch: 'main',
      subdomain: 'quiz-api',
      buildConfig: { installCommand: 'npm ci', buildCommand: '', outputDirectory: '', startCommand: 'npm start' },
      showInDiscover: true,
      activeDeployment: { _id: 'dep-quiz', subdomain: 'quiz-api', url: liveURL(page, 'quiz-api') },
      deployments: [
        { _id: 'dep-quiz', version: '1.2.0', subdomain: 'quiz-api', url: liveURL(page, 'quiz-api'), status: 'live', createdAt: iso(3 * DAY) },
        { _id: 'dep-quiz-1', version: '1.1.0', subdomain: 'quiz-api', url: liveURL(page, 'quiz-api'), status: 'stopped', createdAt: iso(9 * DAY) },
      ],
    },
    {
      _id: 'p-club',
      name: 'Chess Club Website',
      description: 'Static site for the university chess club',
      status: 'draft',
      type: 'static',
      repository: repo('club-website', '', { lastCommit: null }),
      branch: 'main',
      buildConfig: { installCommand: '', buildCommand: '', outputDirectory: '.' },
      activeDeployment: null,
      deployments: [],
    },
  ]
}

function deployment(page, overrides = {}) {
  return {
    _id: 'demo-deployment',
    version: '1.0.0',
    subdomain: 'portfolio',
    url: liveURL(page, 'portfolio'),
    status: 'live',
    createdAt: iso(2 * 3600_000),
    project: {
      _id: 'demo-project',
      name: 'Portfolio',
      type: 'react',
      buildConfig: { installCommand: 'npm ci', buildCommand: 'npm run build', outputDirectory: 'dist' },
      repository: { fullName: 'maya-chen/portfolio', url: 'https://github.com/maya-chen/portfolio' },
    },
    buildInfo: {
      startTime: iso(2 * 3600_000),
      endTime: iso(2 * 3600_000 - 41_600),
      duration: 41_600,
      buildSize: 486_912,
      buildCommand: 'npm run build',
      outputDirectory: 'dist',
      framework: 'react',
    },
    metadata: {
      commitHash: '9f4c2e1a7b3d5f6e8a0c1b2d3e4f5a6b7c8d9e0f',
      commitMessage: 'Add contact form and dark mode',
      branch: 'main',
      author: 'Maya Chen',
      trigger: 'manual',
      repository: { fullName: 'maya-chen/portfolio' },
    },
    buildLogs: logs().slice(0, 8),
    environment: {
      variables: [
        { key: 'VITE_API_URL', value: 'https://api.example.com', isSecret: false },
        { key: 'CONTACT_FORM_KEY', value: '••••••••', isSecret: true },
      ],
    },
    ...overrides,
  }
}

function logs() {
  const lines = [
    ['info', 'deployment', 'Queued: starting now'],
    ['info', 'deployment', 'Cloning maya-chen/portfolio (branch main)'],
    ['info', 'deployment', 'Commit 9f4c2e1: Add contact form and dark mode (Maya Chen)'],
    ['info', 'deployment', 'Detected React (Vite); installing with npm ci'],
    ['info', 'deployment', '$ npm ci'],
    ['warning', 'deployment', 'npm warn deprecated inflight@1.0.6: This module is not supported, and leaks memory.'],
    ['info', 'deployment', 'added 212 packages, and audited 213 packages in 9s'],
    ['info', 'deployment', '$ npm run build'],
    ['info', 'deployment', 'vite v6.2.0 building for production...'],
    ['info', 'deployment', '✓ 1342 modules transformed.'],
    ['info', 'deployment', 'dist/index.html                   0.46 kB │ gzip:  0.30 kB'],
    ['info', 'deployment', 'dist/assets/index-DiwrgTda.css   12.84 kB │ gzip:  3.21 kB'],
    ['info', 'deployment', 'dist/assets/index-C2vKf0Xc.js   187.61 kB │ gzip: 60.02 kB'],
    ['info', 'deployment', '✓ built in 3.87s'],
    ['info', 'deployment', 'Publishing dist (475.5 KB, 14 files)'],
    ['success', 'deployment', 'Deployment is live at portfolio'],
    ['info', 'runtime', 'GET / 200 (1.2 ms)'],
    ['error', 'runtime', 'GET /favicon.ico 404 (0.4 ms)'],
  ]
  return lines.map(([level, type, message], i) => ({
    seq: i + 1,
    timestamp: new Date(NOW - 2 * 3600_000 + i * 2300).toISOString(),
    level,
    type,
    message,
  }))
}

function deployments(page) {
  const base = deployment(page)
  return [
    base,
    deployment(page, {
      _id: 'dep-recipes',
      subdomain: 'recipe-finder',
      url: liveURL(page, 'recipe-finder'),
      status: 'building',
      createdAt: iso(60_000),
      project: { ...base.project, name: 'Recipe Finder', type: 'vue' },
      buildInfo: { startTime: iso(50_000), buildCommand: 'yarn build', outputDirectory: 'dist' },
      metadata: { ...base.metadata, commitHash: '3b1d9c07aa', commitMessage: 'Filter by cooking time', branch: 'develop' },
    }),
    deployment(page, {
      _id: 'dep-thesis',
      subdomain: 'thesis-api',
      url: liveURL(page, 'thesis-api'),
      status: 'failed',
      error: 'python3 -m venv --system-site-packages .venv && .venv/bin/pip install -r requirements.txt exited with code 1',
      diagnosis: {
        title: 'The build could not reach the Python package index',
        detail:
          "pip tried to download blinker==1.9.0 and every attempt failed (the highlighted retries): this is the network, not your code, and your requirements.txt is probably fine. Deploy again later; if it keeps failing, tell the platform's operator (a campus package mirror can be set for builds).",
        lines: [5, 6, 7, 8, 10],
      },
      createdAt: iso(5 * 3600_000),
      project: { ...base.project, name: 'Thesis API', type: 'flask' },
      buildInfo: { startTime: iso(5 * 3600_000), duration: 18_200, buildCommand: '', outputDirectory: '' },
      metadata: { ...base.metadata, commitHash: 'c0ffee1234', commitMessage: 'Pin numpy', branch: 'main' },
    }),
    deployment(page, {
      _id: 'dep-quiz',
      subdomain: 'quiz-api',
      url: liveURL(page, 'quiz-api'),
      status: 'live',
      sleeping: true,
      version: '1.2.0',
      createdAt: iso(3 * DAY),
      project: { ...base.project, _id: 'p-quiz', name: 'Quiz API', type: 'nodejs', buildConfig: { installCommand: 'npm ci', buildCommand: '', outputDirectory: '', startCommand: 'npm start' } },
      buildInfo: { startTime: iso(3 * DAY), duration: 9_400, buildCommand: '', outputDirectory: '', startCommand: 'npm start' },
      metadata: { ...base.metadata, commitHash: '5a1e3c9d2b', commitMessage: 'Add leaderboard endpoint', branch: 'main' },
    }),
    deployment(page, { _id: 'dep-2', status: 'stopped', createdAt: iso(DAY) }),
    deployment(page, {
      _id: 'dep-1',
      status: 'stopped',
      version: '0.9.0',
      createdAt: iso(40 * DAY),
      prunedAt: iso(2 * DAY),
      filesSize: 0,
      metadata: { ...base.metadata, commitHash: '7e5d1a0b22', commitMessage: 'First version', branch: 'main' },
    }),
    deployment(page, {
      _id: 'dep-orphan',
      subdomain: 'old-demo',
      url: liveURL(page, 'old-demo'),
      status: 'pending',
      project: null,
      createdAt: iso(30_000),
      buildInfo: {},
      metadata: {},
    }),
  ]
}

const ok = (data) => ({ status: 200, json: { success: true, data } })

/** Answers the projects and deployments API in the page with the data above. */
async function withData(page, { path, extra = {} } = {}) {
  await page.route(
    (url) => url.pathname.startsWith('/api/projects') || url.pathname.startsWith('/api/deployments'),
    async (route) => {
      const url = new URL(route.request().url())
      const method = route.request().method()
      const key = `${method} ${url.pathname}`
      const table = {
        'GET /api/projects': () => ok({ projects: projects(page) }),
        'GET /api/deployments': () => ok({ deployments: deployments(page) }),
        'GET /api/deployments/demo-deployment/logs': () => ok({ logs: logs(), total: logs().length }),
        'GET /api/deployments/dep-thesis/logs': () =>
          ok({
            logs: [
              ...logs().slice(0, 3),
              { seq: 4, timestamp: iso(5 * 3600_000 - 9000), level: 'info', type: 'deployment', message: 'Installing dependencies: python3 -m venv --system-site-packages .venv && .venv/bin/pip install -r requirements.txt' },
              { seq: 5, timestamp: iso(5 * 3600_000 - 10000), level: 'warning', type: 'deployment', message: "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError(\'<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f3a>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution\')': /simple/blinker/" },
              { seq: 6, timestamp: iso(5 * 3600_000 - 11000), level: 'warning', type: 'deployment', message: "WARNING: Retrying (Retry(total=3, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError(\'<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f3a>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution\')': /simple/blinker/" },
              { seq: 7, timestamp: iso(5 * 3600_000 - 12000), level: 'warning', type: 'deployment', message: "WARNING: Retrying (Retry(total=2, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError(\'<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f3a>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution\')': /simple/blinker/" },
              { seq: 8, timestamp: iso(5 * 3600_000 - 13000), level: 'warning', type: 'deployment', message: "WARNING: Retrying (Retry(total=1, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError(\'<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f3a>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution\')': /simple/blinker/" },
              { seq: 9, timestamp: iso(5 * 3600_000 - 15000), level: 'error', type: 'deployment', message: 'ERROR: Could not find a version that satisfies the requirement blinker==1.9.0 (from versions: none)' },
              { seq: 10, timestamp: iso(5 * 3600_000 - 15000), level: 'error', type: 'deployment', message: 'ERROR: No matching distribution found for blinker==1.9.0' },
              { seq: 11, timestamp: iso(5 * 3600_000 - 16000), level: 'error', type: 'deployment', message: 'python3 -m venv --system-site-packages .venv && .venv/bin/pip install -r requirements.txt exited with code 1' },
              { seq: 12, timestamp: iso(5 * 3600_000 - 16000), level: 'error', type: 'deployment', message: "Why it failed: The build could not reach the Python package index. pip tried to download blinker==1.9.0 and every attempt failed (the highlighted retries): this is the network, not your code, and your requirements.txt is probably fine. Deploy again later; if it keeps failing, tell the platform's operator (a campus package mirror can be set for builds)." },
            ],
            total: 12,
          }),
        ...extra,
      }
      const project = /^\/api\/projects\/([^/]+)$/.exec(url.pathname)
      const domains = /^\/api\/projects\/([^/]+)\/domains$/.exec(url.pathname)
      const dep = /^\/api\/deployments\/([^/]+)$/.exec(url.pathname)
      let answer
      if (table[key]) answer = table[key]()
      // Issue 14's previews of a project (none here; push-to-deploy-screens.mjs shows some).
      else if (method === 'GET' && /^\/api\/projects\/[^/]+\/previews$/.test(url.pathname)) answer = ok({ previews: [] })
      // Issue 28's data folders: none unless the screen says (project-detail-app-data).
      else if (method === 'GET' && /^\/api\/projects\/[^/]+\/data$/.test(url.pathname))
        answer = ok({ data: { mount: '/data', size: 0, folders: [] } })
      else if (method === 'GET' && project) answer = ok({ project: projects(page).find((p) => p._id === project[1]) })
      else if (method === 'GET' && domains) answer = ok({ domains: [] })
      else if (method === 'GET' && dep) answer = ok({ deployment: deployments(page).find((d) => d._id === dep[1]) })
      if (answer) await route.fulfill(answer)
      else await route.continue()
    },
  )
  if (path) await page.goto(path)
  else await page.reload()
}

/**
 * failDetail makes GET `apiPath` fail — with `status` and the server's
 * `message`, or as an unreachable server (`network`) — and reloads. A Retry
 * is then answered after 8 s, so the "Retrying..." state can be seen.
 */
async function failDetail(page, apiPath, { status, message, network = false }) {
  let failures = 0
  await page.route(
    (url) => url.pathname === apiPath,
    async (route) => {
      if (failures++ >= 2) await new Promise((r) => setTimeout(r, 8000))
      // The page may be gone by then: the screenshot is taken.
      const answer = network
        ? route.abort('internetdisconnected')
        : route.fulfill({ status, json: { success: false, message } })
      await answer.catch(() => {})
    },
  )
  await page.reload()
}

const heading = (name) => (page) => page.getByRole('heading', { level: 1, name }).first().waitFor()
const ready = (page) => page.locator('main h1').first().waitFor()

export const PROJECT_SCREENS = [
  {
    name: 'projects',
    path: '/projects',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page)
      await page.getByText('Chess Club Website').waitFor()
    },
  },
  {
    name: 'projects-empty',
    path: '/projects',
    auth: true,
    ready: heading('My Projects'),
    // The screenshot user has a real project once the Domains screens made one.
    act: async (page) => {
      await page.route('**/api/projects', (route) =>
        route.fulfill({ json: { success: true, data: { projects: [] } } }),
      )
      await page.reload()
      await page.getByText('No projects yet').waitFor()
    },
  },
  {
    name: 'project-detail',
    path: '/projects/demo-project',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page)
      await page.getByRole('heading', { name: 'Recent Deployments' }).waitFor()
    },
  },
  {
    name: 'project-detail-app-data',
    path: '/projects/p-quiz',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page, {
        path: '/projects/p-quiz',
        extra: {
          'GET /api/projects/p-quiz/data': () =>
            ok({
              data: {
                mount: '/data',
                size: 48_900_000,
                folders: [
                  { name: 'production', bytes: 47_200_000, measuredAt: iso(4 * 60_000) },
                  { name: 'preview-quiz-api--pr-7', bytes: 1_700_000, measuredAt: iso(3 * 3600_000) },
                ],
                snapshots: [
                  { id: '20260305T030000Z', at: iso(11.5 * 3600_000), bytes: 9_800_000 },
                  { id: '20260304T030000Z', at: iso(35.5 * 3600_000), bytes: 9_600_000 },
                ],
              },
            }),
        },
      })
      await page.getByRole('list', { name: 'Data folders' }).waitFor()
    },
  },
  {
    name: 'project-detail-private',
    path: '/projects/p-thesis',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page, { path: '/projects/p-thesis' })
      await page.getByRole('switch', { name: 'Show in Discover' }).waitFor()
    },
  },
  {
    name: 'project-edit',
    path: '/projects/demo-project/edit',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page, {
        path: '/projects/demo-project/edit',
        extra: {
          'GET /api/projects/demo-project/env': () =>
            ok({
              variables: [
                { key: 'NODE_ENV', value: 'production', isSecret: false },
                { key: 'API_BASE_URL', value: 'https://api.example.com', isSecret: false },
                { key: 'STRIPE_SECRET_KEY', value: '••••••••', isSecret: true },
              ],
            }),
        },
      })
      await page.getByLabel('Project name').waitFor()
      await page.getByRole('form', { name: 'Environment variables' }).getByText('Secret').first().waitFor()
    },
  },
  {
    // A saved secret renamed without typing its value again: the editor asks for it.
    name: 'project-edit-secret-renamed',
    path: '/projects/demo-project/edit',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page, {
        path: '/projects/demo-project/edit',
        extra: {
          'GET /api/projects/demo-project/env': () =>
            ok({
              variables: [
                { key: 'NODE_ENV', value: 'production', isSecret: false },
                { key: 'STRIPE_SECRET_KEY', value: '••••••••', isSecret: true, scope: 'production' },
              ],
            }),
        },
      })
      const form = page.getByRole('form', { name: 'Environment variables' })
      await form.getByLabel('Name').nth(1).fill('STRIPE_API_KEY')
      await form.getByRole('button', { name: 'Save Variables' }).click()
      await form.getByText('Type the value of STRIPE_API_KEY again').waitFor()
      await page.evaluate(() => window.scrollTo(0, 0))
    },
  },
  { name: 'project-not-found', path: '/projects/no-such-project', auth: true, ready: heading('Project not found') },
  {
    // Any failure but a 404: the retry state (after the query's one retry), and its toast.
    name: 'project-error',
    path: '/projects/demo-project',
    auth: true,
    ready,
    act: async (page) => {
      await failDetail(page, '/api/projects/demo-project', { status: 500, message: 'Internal error.' })
      await page.getByRole('button', { name: 'Retry' }).waitFor()
    },
  },
  {
    name: 'project-error-retrying',
    path: '/projects/demo-project',
    auth: true,
    full: false,
    ready,
    act: async (page) => {
      await failDetail(page, '/api/projects/demo-project', { status: 500, message: 'Internal error.' })
      await page.getByRole('button', { name: 'Retry' }).waitFor()
      await page.waitForTimeout(4500) // let the toast go
      await page.getByRole('button', { name: 'Retry' }).click()
      await page.getByRole('button', { name: 'Retrying...' }).waitFor()
    },
  },
  { name: 'project-new', path: '/projects/new', auth: true, ready: heading('New Project') },
  {
    name: 'project-new-public',
    path: '/projects/new',
    auth: true,
    ready: heading('New Project'),
    act: async (page) => {
      await page.route('**/api/projects/public-repo', (route) =>
        route.fulfill(
          ok({
            repository: {
              id: 'r-portfolio',
              name: 'portfolio',
              fullName: 'maya-chen/portfolio',
              description: 'My personal portfolio: projects, CV and contact page',
              defaultBranch: 'main',
              private: false,
              url: 'https://github.com/maya-chen/portfolio',
              cloneUrl: 'https://github.com/maya-chen/portfolio.git',
              lastCommit: null,
            },
            branch: 'main',
            suggestedName: 'portfolio',
            suggestedDescription: 'My personal portfolio: projects, CV and contact page',
            buildConfig: { installCommand: 'npm ci', buildCommand: 'npm run build', outputDirectory: 'dist' },
            framework: 'react',
          }),
        ),
      )
      await page.getByRole('button', { name: 'Any Public Repository', exact: true }).click()
      await page.getByLabel('Repository URL').fill('https://github.com/maya-chen/portfolio')
      await page.getByRole('button', { name: 'Load Repository' }).click()
      await page.getByLabel('Project name').waitFor()
      await page.waitForTimeout(4500) // let the toast go
    },
  },
  {
    name: 'deployments',
    path: '/deployments',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page)
      await page.getByText('Unknown Project').waitFor()
    },
  },
  {
    name: 'deployment-detail',
    path: '/deployments/demo-deployment',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page)
      await page.getByText('18 of 18 log entries').waitFor()
    },
  },
  {
    name: 'deployment-detail-failed',
    path: '/deployments/dep-thesis',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page)
      await page.getByRole('alert', { name: 'Why it failed' }).waitFor()
      await page.getByText('12 of 12 log entries').waitFor()
    },
  },
  {
    name: 'deployment-detail-sleeping',
    path: '/deployments/dep-quiz',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page, { extra: { 'GET /api/deployments/dep-quiz/logs': () => ok({ logs: [], total: 0 }) } })
      await page.getByRole('img', { name: 'Status: Sleeping' }).waitFor()
    },
  },
  {
    name: 'project-detail-sleeping',
    path: '/projects/p-quiz',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page)
      await page.getByRole('switch', { name: 'Always on' }).waitFor()
      await page.getByText('Sleeping').first().waitFor()
    },
  },
  {
    name: 'deployment-detail-pruned',
    path: '/deployments/dep-1',
    auth: true,
    ready,
    act: async (page) => {
      await withData(page)
      await page.getByText('Files removed to save space').first().waitFor()
    },
  },
  { name: 'deployment-not-found', path: '/deployments/no-such-deployment', auth: true, ready: heading('Deployment not found') },
  {
    name: 'deployment-error',
    path: '/deployments/demo-deployment',
    auth: true,
    ready,
    act: async (page) => {
      await failDetail(page, '/api/deployments/demo-deployment', { network: true })
      await page.getByRole('button', { name: 'Retry' }).waitFor()
    },
  },
]
