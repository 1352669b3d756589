// The Domains card of Project detail against the real server: a real
// project (cloned from a git host on loopback) with a real custom domain
// added through the API — waiting for DNS, with the records to create. The
// Free plan allows one domain per project, so the other statuses (verified
// with a redirect, certificate issued, error with its reason) are added to
// the server's answer in the page.
import { startGitHost, staticSite } from './githost.mjs'

let gitHost
let made // token → project id

/** Stops the git host the Domains screens started, if they did (takeScreenshots calls it at its end). */
export async function stopDomainScreens() {
  await gitHost?.stop()
  gitHost = undefined
  made = undefined
}

async function api(page, method, pathname, body) {
  const token = await page.evaluate(() => localStorage.getItem('token'))
  const res = await page.request.fetch(pathname, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    data: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = await res.json()
  if (!res.ok()) throw new Error(`${method} ${pathname}: ${res.status()} ${JSON.stringify(json)}`)
  return json.data
}

/** The signed-in user's project with a custom domain, made once per run. */
async function projectWithDomain(page) {
  if (made) return made
  gitHost ??= await startGitHost()
  const url = await gitHost.addRepo('maya-chen/portfolio', staticSite('domains', 'Maya Chen'))
  const { project } = await api(page, 'POST', '/api/projects/public', {
    repository: { url },
    name: 'Maya Portfolio',
    description: 'My personal portfolio',
    branch: 'main',
    buildConfig: { outputDirectory: '.' },
  })
  await api(page, 'POST', `/api/projects/${project._id}/domains`, { name: 'www.maya-chen.dev' })
  made = project._id
  return made
}

const at = (ms) => new Date(Date.UTC(2026, 2, 4, 10) - ms).toISOString()

function extraDomains(project, sub) {
  const base = { project, attempts: 3, nextCheckAt: at(0), createdAt: at(86_400_000), verifiedAt: at(3_600_000) }
  return [
    {
      ...base,
      _id: 'fake-apex',
      name: 'maya-chen.dev',
      apex: true,
      primary: false,
      redirect: 'to-www',
      verificationToken: 'gantry-verify=5b1f0c2ad4e84a7d9e3c6b2f1a0d9e8c',
      status: 'certificate_issued',
      error: '',
      records: [
        { type: 'A', name: 'maya-chen.dev', value: '203.0.113.10' },
        { type: 'TXT', name: '_gantry-challenge.maya-chen.dev', value: 'gantry-verify=5b1f0c2ad4e84a7d9e3c6b2f1a0d9e8c' },
      ],
    },
    {
      ...base,
      _id: 'fake-blog',
      name: 'blog.maya-chen.dev',
      apex: false,
      primary: false,
      redirect: 'none',
      verificationToken: 'gantry-verify=0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b',
      status: 'error',
      verifiedAt: null,
      error: `blog.maya-chen.dev points to maya.github.io, not ${sub}`,
      records: [
        { type: 'CNAME', name: 'blog.maya-chen.dev', value: sub },
        { type: 'TXT', name: '_gantry-challenge.blog.maya-chen.dev', value: 'gantry-verify=0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b' },
      ],
    },
  ]
}

export const DOMAIN_SCREENS = [
  {
    name: 'project-domains',
    path: '/projects',
    auth: true,
    ready: (page) => page.locator('main h1').first().waitFor(),
    act: async (page) => {
      const id = await projectWithDomain(page)
      await page.route(
        (url) => url.pathname === `/api/projects/${id}/domains`,
        async (route) => {
          if (route.request().method() !== 'GET') return route.continue()
          const response = await route.fetch()
          const json = await response.json()
          const real = json.data.domains[0]
          const sub = real.records.find((r) => r.type === 'CNAME').value
          json.data.domains = [...json.data.domains, ...extraDomains(id, sub)]
          await route.fulfill({ response, json })
        },
      )
      await page.goto(`/projects/${id}`)
      await page.getByRole('heading', { name: 'Domains' }).waitFor()
      await page.getByText('blog.maya-chen.dev points to').waitFor()
    },
  },
  {
    name: 'project-domains-add-error',
    path: '/projects',
    auth: true,
    full: false,
    ready: (page) => page.locator('main h1').first().waitFor(),
    act: async (page) => {
      const id = await projectWithDomain(page)
      await page.goto(`/projects/${id}`)
      const field = page.getByLabel('Add a domain')
      await field.fill('second.maya-chen.dev')
      await page.getByRole('button', { name: 'Add', exact: true }).click()
      await page.getByText('Your Free plan allows 1 custom domain per project').first().waitFor()
      await field.scrollIntoViewIfNeeded()
    },
  },
]
