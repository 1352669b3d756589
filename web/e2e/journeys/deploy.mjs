// A student registers, imports a public repository from a git host on
// loopback, deploys it, watches the build log stream in live, visits the
// site on its subdomain, stops it (503), restarts it (200) and deletes it.
import assert from 'node:assert/strict'
import { startGitHost, staticSite } from '../lib/githost.mjs'

export const title = 'student deploys a public repository, watches the logs, visits, stops, restarts and deletes it'

export default async function deployJourney({ newPage, uniqueUser, baseURL }) {
  const host = await startGitHost()
  try {
    await run({ newPage, uniqueUser, baseURL, host })
  } finally {
    await host.stop()
  }
}

async function run({ newPage, uniqueUser, baseURL, host }) {
  const user = uniqueUser('dep')
  const marker = `gantry-e2e-marker-${user.username}`
  const repoURL = await host.addRepo('e2e/site', staticSite(marker))
  const page = await newPage()

  // Register.
  await page.goto('/register')
  await page.getByLabel('Full name').fill(user.fullName)
  await page.getByLabel('Username').fill(user.username)
  await page.getByLabel('Email address').fill(user.email)
  await page.getByLabel('Password', { exact: true }).fill(user.password)
  await page.getByLabel('Confirm password').fill(user.password)
  await page.getByRole('checkbox', { name: /i agree to the terms/i }).check()
  await page.getByRole('button', { name: 'Create account' }).click()
  await page.waitForURL(`${baseURL}/dashboard`)

  // Projects → New Project → Any Public Repository.
  await page.locator('aside').getByRole('link', { name: 'Projects' }).click()
  await page.getByRole('heading', { level: 1, name: 'My Projects' }).waitFor()
  await page.getByText('No projects yet').waitFor()
  await page.getByRole('link', { name: 'New Project' }).first().click()
  await page.waitForURL(`${baseURL}/projects/new`)
  await page.getByRole('heading', { name: 'GitHub Account Required' }).waitFor()
  await page.getByRole('button', { name: 'Any Public Repository', exact: true }).click()

  // An empty URL is refused before anything is sent.
  await page.getByRole('button', { name: 'Load Repository' }).click()
  await page.getByText('Please enter a repository URL').first().waitFor()

  await page.getByLabel('Repository URL').fill(repoURL)
  await page.getByRole('button', { name: 'Load Repository' }).click()
  await page.getByText('Repository e2e/site loaded successfully').waitFor({ timeout: 30_000 })
  await page.getByTestId('framework').getByText('Static').waitFor()
  assert.equal(await page.getByLabel('Branch').inputValue(), 'main')

  // A build step that takes a few seconds, so its last lines can only
  // arrive through the live stream.
  const projectName = `Site ${user.username}`
  await page.getByLabel('Project name').fill(projectName)
  await page.getByLabel('Build command').fill('echo build step one && sleep 4 && echo build step two')

  const streamRequest = page.waitForRequest((r) => /\/api\/deployments\/[^/]+\/logs\/stream$/.test(r.url()))
  const firstLogs = page.waitForResponse((r) => /\/api\/deployments\/[^/]+\/logs\?limit=200$/.test(r.url()))
  await page.getByRole('button', { name: 'Create & Deploy Project' }).click()
  await page.getByText('Project created successfully!').waitFor()
  await page.waitForURL(/\/deployments\/[^/]+$/, { timeout: 15_000 })
  await page.getByRole('heading', { level: 1, name: `${projectName} Deployment` }).waitFor()

  // The log streams in live: Live stream is on, the stream carries the token
  // in its header (not the URL) and resumes after the entries already shown.
  const liveSwitch = page.getByRole('switch', { name: 'Live stream' })
  const fetched = await (await firstLogs).json()
  const request = await streamRequest
  assert.match(request.headers().authorization ?? '', /^Bearer \S+$/)
  assert.ok(!request.url().includes('token'), 'the token never travels in the URL')
  const maxFetched = Math.max(0, ...fetched.data.logs.map((e) => e.seq))
  assert.equal(request.headers()['last-event-id'], String(maxFetched))
  assert.ok(
    !fetched.data.logs.some((e) => e.message.trim() === 'build step two'),
    'the last build line is not in the first fetch',
  )
  const log = page.getByRole('log', { name: 'Log entries' })
  await log.getByText('build step two', { exact: true }).waitFor({ timeout: 60_000 })
  assert.equal(await liveSwitch.getAttribute('aria-checked'), 'true')

  // The status turns Live.
  await page.getByRole('img', { name: 'Status: Live' }).waitFor({ timeout: 60_000 })
  const subdomain = await subdomainOf(page)
  const siteURL = new URL(baseURL)
  const expected = `${siteURL.protocol}//${subdomain}.localhost:${siteURL.port}`

  // Visit Site opens the live subdomain in a new page showing the site.
  const [site] = await Promise.all([
    page.waitForEvent('popup'),
    page.getByRole('link', { name: 'Visit Site' }).click(),
  ])
  await site.waitForLoadState()
  assert.equal(new URL(site.url()).origin, expected)
  await site.getByText(marker).waitFor()

  // Stop: the site answers 503.
  await page.getByRole('button', { name: 'Stop' }).click()
  await page.getByText('Deployment stopped successfully').waitFor()
  await page.getByRole('img', { name: 'Status: Stopped' }).waitFor()
  const stopped = await site.goto(expected)
  assert.equal(stopped?.status(), 503)

  // Restart: 200 again.
  await page.getByRole('button', { name: 'Restart' }).click()
  await page.getByText('Deployment restarted successfully').waitFor()
  await page.getByRole('img', { name: 'Status: Live' }).waitFor()
  const restarted = await site.goto(expected)
  assert.equal(restarted?.status(), 200)
  await site.getByText(marker).waitFor()

  // The plan card counts the published site and its log against the storage budget.
  const storage = page.getByTestId('plan-storage')
  await storage.filter({ hasText: /Storage\d+(\.\d+)? KB of 1 GB/ }).waitFor()

  const before = await storage.textContent()

  // Delete, with its confirmation.
  await page.getByRole('button', { name: 'Delete' }).click()
  const dialog = page.getByRole('dialog')
  await dialog
    .getByText(
      'Are you sure you want to delete this deployment? This action cannot be undone and will remove all deployment data, files, and the application link.',
    )
    .waitFor()
  await dialog.getByRole('button', { name: 'Delete' }).click()
  await page.waitForURL(`${baseURL}/deployments`)
  await page.getByText('Deployment deleted successfully').waitFor()
  await page.getByText('No deployments found').waitFor()
  // Its files and logs no longer count; the project's build cache (kept
  // for its next deploy) still does.
  const bytes = (text) => {
    const m = /Storage(\d+(?:\.\d+)?) (B|KB|MB) of/.exec(text ?? '')
    return m ? Number(m[1]) * { B: 1, KB: 1024, MB: 1024 * 1024 }[m[2]] : NaN
  }
  let after = before
  for (let i = 0; i < 100 && after === before; i++) {
    await page.waitForTimeout(100)
    after = await storage.textContent()
  }
  assert.ok(bytes(after) < bytes(before), `storage went from ${before} to ${after}`)
}

/** The subdomain shown under the deployment's title. */
async function subdomainOf(page) {
  const text = await page.getByTestId('deployment-subdomain').textContent()
  return text.trim()
}
