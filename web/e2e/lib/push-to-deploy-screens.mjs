// Screenshots of the issue 14 screens (push to deploy, previews, rollback)
// before the server has their endpoints: every answer these screens read is
// made up here in the page (page.route), realistic but fixed. Delete this
// file (and its line in screens.mjs) once the server answers them itself;
// the real flow is then covered by a journey against the binary.
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const ago = (ms) => new Date(Date.now() - ms).toISOString()

function origin(page) {
  const u = new URL(page.url())
  return { protocol: u.protocol, port: u.port ? `:${u.port}` : '', base: `${u.protocol}//${u.host}` }
}
const siteURL = (page, sub) => {
  const o = origin(page)
  return `${o.protocol}//${sub}.localhost${o.port}`
}

const PROJECT_ID = 'ptd-project'

function project(page, overrides = {}) {
  return {
    _id: PROJECT_ID,
    name: 'Portfolio',
    description: 'My personal portfolio: projects, CV and contact page',
    status: 'deployed',
    type: 'react',
    repository: {
      id: 'r-portfolio',
      name: 'portfolio',
      fullName: 'maya-chen/portfolio',
      description: 'My personal portfolio',
      defaultBranch: 'main',
      private: Boolean(page?.privateRepository),
      url: 'https://github.com/maya-chen/portfolio',
      cloneUrl: 'https://github.com/maya-chen/portfolio.git',
      lastCommit: { message: 'Add contact form and dark mode', author: 'Maya Chen', date: ago(2 * HOUR), sha: '9f4c2e1a7b3d5f6e8a0c1b2d3e4f5a6b7c8d9e0f' },
    },
    branch: 'main',
    subdomain: 'portfolio',
    buildConfig: { installCommand: 'npm ci', buildCommand: 'npm run build', outputDirectory: 'dist' },
    showInDiscover: true,
    autoDeploy: true,
    watchCommits: false,
    deployHookUrl: `${origin(page).base}/api/hooks/deploy/${PROJECT_ID}/h7Qm2xVt9LcR4pZs8NwK3yBd`,
    activeDeployment: { _id: 'ptd-d3', subdomain: 'portfolio', url: siteURL(page, 'portfolio') },
    deployments: history(page).map(({ _id, version, subdomain, url, status, createdAt }) => ({ _id, version, subdomain, url, status, createdAt })),
    ...overrides,
  }
}

function deployment(page, overrides = {}) {
  const { metadata, ...rest } = overrides
  return {
    _id: 'ptd-d3',
    version: '1.0.0',
    subdomain: 'portfolio',
    url: siteURL(page, 'portfolio'),
    status: 'live',
    target: 'production',
    promotedAt: null,
    createdAt: ago(2 * HOUR),
    project: {
      _id: PROJECT_ID,
      name: 'Portfolio',
      type: 'react',
      buildConfig: { installCommand: 'npm ci', buildCommand: 'npm run build', outputDirectory: 'dist' },
      repository: { fullName: 'maya-chen/portfolio', url: 'https://github.com/maya-chen/portfolio' },
    },
    buildInfo: { startTime: ago(2 * HOUR), endTime: ago(2 * HOUR - 38_000), duration: 38_000, buildSize: 486_912, buildCommand: 'npm run build', outputDirectory: 'dist', framework: 'react' },
    metadata: {
      commitHash: '9f4c2e1a7b3d5f6e8a0c1b2d3e4f5a6b7c8d9e0f',
      commitMessage: 'Add contact form and dark mode',
      branch: 'main',
      author: 'Maya Chen',
      trigger: 'push',
      repository: { fullName: 'maya-chen/portfolio' },
      ...metadata,
    },
    buildLogs: [],
    environment: { variables: [{ key: 'VITE_API_URL', value: 'https://api.example.com', isSecret: false }] },
    ...rest,
  }
}

/** The production History, newest first: the live one was promoted back over a bad deploy. */
function history(page) {
  return [
    deployment(page, {
      _id: 'ptd-d4',
      status: 'stopped',
      createdAt: ago(50 * MINUTE),
      metadata: { commitHash: 'b41d07c2e9', commitMessage: 'Switch the hero image to WebP', trigger: 'hook', author: 'Maya Chen' },
    }),
    deployment(page, { _id: 'ptd-d3', status: 'live', createdAt: ago(2 * HOUR), promotedAt: ago(40 * MINUTE) }),
    deployment(page, {
      _id: 'ptd-d2',
      status: 'stopped',
      createdAt: ago(DAY + 3 * HOUR),
      metadata: { commitHash: '5c8e21f0ab', commitMessage: 'Projects page with filters', trigger: 'manual' },
    }),
    deployment(page, {
      _id: 'ptd-d1',
      status: 'failed',
      createdAt: ago(3 * DAY),
      error: 'npm run build exited with code 1',
      metadata: { commitHash: '0d3a9b7e11', commitMessage: 'Try the new router', trigger: 'push', author: 'Maya Chen' },
    }),
  ]
}

function previews(page) {
  return [
    deployment(page, {
      _id: 'ptd-pr-12',
      target: 'preview',
      subdomain: 'portfolio--pr-12',
      url: siteURL(page, 'portfolio--pr-12'),
      status: 'live',
      createdAt: ago(25 * MINUTE),
      metadata: { commitHash: 'e7f3a9c410', commitMessage: 'Mobile navigation drawer', branch: 'mobile-nav', trigger: 'pull_request', pullRequest: 12, author: 'Maya Chen' },
    }),
    deployment(page, {
      _id: 'ptd-blog',
      target: 'preview',
      subdomain: 'portfolio--feature-blog',
      url: siteURL(page, 'portfolio--feature-blog'),
      status: 'building',
      createdAt: ago(3 * MINUTE),
      buildInfo: { startTime: ago(3 * MINUTE), buildCommand: 'npm run build', outputDirectory: 'dist' },
      metadata: { commitHash: '2aa4c6d8e0', commitMessage: 'First blog post', branch: 'feature/blog', trigger: 'push', author: 'Maya Chen' },
    }),
    deployment(page, {
      _id: 'ptd-typo',
      target: 'preview',
      subdomain: 'portfolio--fix-typos',
      url: siteURL(page, 'portfolio--fix-typos'),
      status: 'failed',
      createdAt: ago(2 * DAY),
      metadata: { commitHash: '77b0e3d5c2', commitMessage: 'Fix typos on the CV page', branch: 'fix-typos', trigger: 'push', author: 'Maya Chen' },
    }),
  ]
}

const GITHUB = () => ({
  webhook: {
    active: true,
    error: null,
    lastDelivery: { at: ago(3 * MINUTE), event: 'push', action: '', result: 'ok', message: 'Building a preview of feature/blog (2aa4c6d)' },
  },
  pullRequests: [
    { number: 12, title: 'Mobile navigation drawer', author: 'maya-chen', headBranch: 'mobile-nav', fork: false, state: 'open', url: 'https://github.com/maya-chen/portfolio/pull/12', headSha: '2aa4c6d1f0e9b8a7c6d5e4f3a2b1c0d9e8f7a6b5', diffUrl: 'https://github.com/maya-chen/portfolio/pull/12/files', deploymentId: 'ptd-pr-12' },
    { number: 15, title: 'Fix broken link to the thesis PDF', author: 'jonas-weber', headBranch: 'patch-1', fork: true, state: 'awaiting_approval', url: 'https://github.com/maya-chen/portfolio/pull/15', headSha: '5e81b0c3d9a2f4e6b7c8d9e0f1a2b3c4d5e6f7a8', diffUrl: 'https://github.com/maya-chen/portfolio/pull/15/files', deploymentId: null },
  ],
  // The variables of scope preview in the env answer below.
  forkVariables: ['VITE_API_URL_PREVIEW'],
})

const ok = (data) => ({ status: 200, json: { success: true, data } })

/** Answers the projects and deployments API for the issue 14 screens, then opens `path`. */
export async function withPushToDeploy(page, path) {
  await page.route(
    (url) => url.pathname.startsWith('/api/projects') || url.pathname.startsWith('/api/deployments'),
    async (route) => {
      const url = new URL(route.request().url())
      const method = route.request().method()
      const p = url.pathname
      const all = () => [...previews(page), ...history(page)]
      let answer
      if (method === 'GET' && p === '/api/projects') answer = ok({ projects: [project(page)] })
      else if (method === 'GET' && p === `/api/projects/${PROJECT_ID}`) answer = ok({ project: project(page) })
      else if (method === 'GET' && p === `/api/projects/${PROJECT_ID}/previews`) answer = ok({ previews: previews(page) })
      else if (method === 'GET' && p === `/api/projects/${PROJECT_ID}/github`) answer = ok(GITHUB())
      else if (method === 'GET' && p === `/api/projects/${PROJECT_ID}/preview-access`)
        answer = ok({ access: { private: Boolean(page.privateRepository), open: false } })
      else if (method === 'GET' && p === `/api/projects/${PROJECT_ID}/env`)
        answer = ok({
          variables: [
            { key: 'VITE_API_URL', value: 'https://api.example.com', isSecret: false, scope: 'production' },
            { key: 'VITE_API_URL_PREVIEW', value: 'https://staging.api.example.com', isSecret: false, scope: 'preview' },
            { key: 'CONTACT_FORM_KEY', value: '••••••••', isSecret: true, scope: 'all' },
          ],
        })
      else if (method === 'GET' && p === '/api/deployments') {
        const target = url.searchParams.get('target')
        answer = ok({ deployments: target === 'production' ? history(page) : target === 'preview' ? previews(page) : all() })
      } else if (method === 'GET' && /^\/api\/deployments\/[^/]+$/.test(p)) {
        const id = p.split('/').pop()
        const d = all().find((x) => x._id === id)
        answer = d ? ok({ deployment: d }) : { status: 404, json: { success: false, message: 'Deployment not found' } }
      } else if (method === 'GET' && /^\/api\/deployments\/[^/]+\/logs$/.test(p)) answer = ok({ logs: [], total: 0 })
      if (answer) await route.fulfill(answer)
      else await route.continue()
    },
  )
  await page.goto(path)
}

const ready = (page) => page.locator('main h1').first().waitFor()

export const PUSH_TO_DEPLOY_SCREENS = [
  {
    name: 'ptd-project-detail',
    path: '/projects',
    auth: true,
    ready,
    act: async (page) => {
      await withPushToDeploy(page, `/projects/${PROJECT_ID}`)
      await page.getByTestId('history-row').first().waitFor()
      await page.getByTestId('last-delivery').waitFor()
      await page.getByTestId('preview-row').first().waitFor()
    },
  },
  {
    // The Git card alone: a fork's pull request with the commit an approval builds,
    // the link to its changes and the variables a fork's build gets.
    name: 'ptd-fork-approval',
    path: '/projects',
    auth: true,
    ready,
    act: async (page) => {
      await withPushToDeploy(page, `/projects/${PROJECT_ID}`)
      await page.getByRole('button', { name: 'Approve 5e81b0c and build' }).waitFor()
    },
    element: (page) => page.getByTestId('git-card'),
  },
  {
    // A private repository: its previews ask for the owner's sign-in, and
    // the owner's switch opens them (issue 24).
    name: 'ptd-project-private-previews',
    path: '/projects',
    auth: true,
    ready,
    act: async (page) => {
      page.privateRepository = true
      await withPushToDeploy(page, `/projects/${PROJECT_ID}`)
      await page.getByRole('switch', { name: 'Anyone with the link can open previews' }).waitFor()
      await page.getByTestId('preview-row').first().scrollIntoViewIfNeeded()
    },
  },
  {
    name: 'ptd-project-promote',
    path: '/projects',
    auth: true,
    full: false,
    ready,
    act: async (page) => {
      await withPushToDeploy(page, `/projects/${PROJECT_ID}`)
      await page.getByRole('button', { name: 'Promote 5c8e21f' }).click()
      await page.getByRole('dialog', { name: 'Promote to production?' }).waitFor()
    },
  },
  {
    name: 'ptd-project-edit',
    path: '/projects',
    auth: true,
    ready,
    act: async (page) => {
      await withPushToDeploy(page, `/projects/${PROJECT_ID}/edit`)
      await page.getByRole('form', { name: 'Environment variables' }).getByText('Secret').first().waitFor()
    },
  },
  {
    name: 'ptd-deployments',
    path: '/deployments',
    auth: true,
    ready,
    act: async (page) => {
      await withPushToDeploy(page, '/deployments')
      await page.getByTestId('deployment-card').nth(6).waitFor()
    },
  },
  {
    name: 'ptd-deployment-preview',
    path: '/deployments',
    auth: true,
    ready,
    act: async (page) => {
      await withPushToDeploy(page, '/deployments/ptd-pr-12')
      await page.getByTestId('deployment-trigger').waitFor()
    },
  },
  {
    name: 'ptd-deployment-rollback',
    path: '/deployments',
    auth: true,
    ready,
    act: async (page) => {
      await withPushToDeploy(page, '/deployments/ptd-d3')
      await page.getByTestId('deployment-trigger').waitFor()
    },
  },
]
