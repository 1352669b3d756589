// A student deploys a static site (through the API, from a git host on
// loopback). A visitor without an account then opens Discover, finds it by
// searching, likes it (the count changes, and survives a reload thanks to
// the visitor cookie), and Visit App opens the live site and counts a view.
// The landing page features it, and another visitor sees the like but not
// as theirs. Its owner then turns "Show in Discover" off on the project
// page: the app leaves Discover and the landing page, and comes back when
// the switch is turned on again.
import assert from 'node:assert/strict'
import { apiCall } from '../lib/harness.mjs'
import { startGitHost, staticSite } from '../lib/githost.mjs'

export const title = 'a visitor finds a live app on Discover, likes it and visits it'

export default async function discoverJourney({ newPage, uniqueUser, registerViaAPI, apiURL }) {
  const host = await startGitHost()
  try {
    await run({ newPage, uniqueUser, registerViaAPI, apiURL, host })
  } finally {
    await host.stop()
  }
}

/** Deploys a static site for a new user through the API and waits until it is live. */
async function deploySite({ uniqueUser, registerViaAPI, apiURL, host }) {
  const user = { ...uniqueUser('gal'), fullName: 'Grace Hopper' }
  const token = await registerViaAPI(user)
  const marker = `gantry-e2e-gallery-${user.username}`
  const repoURL = await host.addRepo(`e2e/${user.username}`, staticSite(marker, 'Compiler Club'))
  const name = `Compiler Club ${user.username}`
  const created = await apiCall(
    apiURL,
    'POST',
    '/api/projects/public',
    {
      repository: { url: repoURL },
      name,
      description: 'Slides and exercises of the compiler reading group',
      branch: 'main',
      buildConfig: { outputDirectory: '.' },
    },
    token,
  )
  assert.equal(created.status, 201, JSON.stringify(created.json))
  const projectId = created.json.data.project._id
  assert.equal(created.json.data.project.showInDiscover, true, 'a public repository shows in Discover by default')
  const deployed = await apiCall(apiURL, 'POST', '/api/deployments', { projectId }, token)
  assert.equal(deployed.status, 201, JSON.stringify(deployed.json))
  const id = deployed.json.data.deployment._id
  const deadline = Date.now() + 90_000
  for (;;) {
    const { json } = await apiCall(apiURL, 'GET', `/api/deployments/${id}`, undefined, token)
    const status = json?.data?.deployment?.status
    if (status === 'live') return { user, token, projectId, name, marker, url: json.data.deployment.url }
    if (status === 'failed' || Date.now() > deadline) throw new Error(`deployment ended ${status}: ${JSON.stringify(json)}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

async function run(ctx) {
  const { newPage } = ctx
  const site = await deploySite(ctx)

  // A visitor without an account: the public layout, no token.
  const page = await newPage()
  await page.goto('/discover')
  await page.getByRole('heading', { level: 1, name: 'Discover' }).waitFor()
  assert.equal(await page.evaluate(() => localStorage.getItem('token')), null)

  // The server searches; only the app matches its author's unique username.
  await page.getByRole('searchbox', { name: 'Search apps' }).fill(site.user.username)
  await page.waitForURL(/search=/)
  // The earlier answer stays on screen until the search's answer arrives.
  await page.getByText('Showing 1 of 1 app', { exact: true }).waitFor()
  const card = page.getByTestId('app-card').filter({ hasText: site.name })
  assert.equal(await page.getByTestId('app-card').count(), 1)
  await card.waitFor()
  await card.getByText('Grace Hopper').waitFor()
  await card.getByText('Static', { exact: true }).waitFor()
  await card.getByText('Just now').or(card.getByText(/^\dm ago$/)).first().waitFor()
  assert.equal((await card.getByTestId('like-count').textContent()).trim(), '0')

  // Like: the count changes at once and after the server answers.
  const liked = page.waitForResponse((r) => r.url().endsWith('/like') && r.request().method() === 'POST')
  await card.getByRole('button', { name: `Like ${site.name}` }).click()
  // React renders the optimistic count on its next frame: wait for it, briefly.
  await card.getByTestId('like-count').filter({ hasText: /^\s*1\s*$/ }).waitFor({ timeout: 2_000 })
  const answer = await (await liked).json()
  assert.deepEqual(answer.data, { likeCount: 1, liked: true })
  assert.equal(await card.getByRole('button', { name: `Unlike ${site.name}` }).getAttribute('aria-pressed'), 'true')

  // The visitor is known by an HttpOnly cookie, not by anything scripts can
  // read; a __Host- one (Secure, Path=/, no Domain: Chromium keeps it on
  // http://localhost), so no app on a sibling domain can plant it.
  const cookies = await page.context().cookies()
  const visitor = cookies.find((c) => c.name === '__Host-gantry_visitor')
  assert.ok(visitor, `no visitor cookie in ${JSON.stringify(cookies)}`)
  assert.equal(visitor.httpOnly, true)
  assert.equal(visitor.secure, true)
  assert.equal(visitor.path, '/')
  assert.equal(visitor.sameSite, 'Lax')
  assert.equal(await page.evaluate(() => document.cookie.includes('gantry_visitor')), false)

  // The like survives a reload (the search is in the address).
  await page.reload()
  await card.waitFor()
  assert.equal((await card.getByTestId('like-count').textContent()).trim(), '1')
  await card.getByRole('button', { name: `Unlike ${site.name}` }).waitFor()

  // Visit App opens the live site in a new tab and counts the view.
  const viewed = page.waitForResponse((r) => r.url().endsWith('/view') && r.request().method() === 'POST')
  const [popup] = await Promise.all([
    page.waitForEvent('popup'),
    card.getByRole('link', { name: /Visit App/ }).click(),
  ])
  await popup.waitForLoadState()
  assert.equal(new URL(popup.url()).origin, new URL(site.url).origin)
  await popup.getByText(site.marker).waitFor()
  assert.equal((await (await viewed).json()).data.counted, true)
  await card.getByTitle('1 view', { exact: true }).waitFor()
  await popup.close()

  // The landing page features the newest apps.
  await page.goto('/')
  const featured = page.getByRole('listitem').filter({ hasText: site.name })
  await featured.waitFor()
  await featured.getByText(`@${site.user.username}`).waitFor()
  await featured.getByRole('link', { name: /Visit App/ }).waitFor()

  // Another visitor sees the like, but not as theirs; unliking stays theirs to do.
  const other = await newPage({ viewport: { width: 375, height: 812 } })
  await other.goto(`/discover?search=${encodeURIComponent(site.user.username)}`)
  const otherCard = other.getByTestId('app-card').filter({ hasText: site.name })
  await otherCard.waitFor()
  assert.equal((await otherCard.getByTestId('like-count').textContent()).trim(), '1')
  await otherCard.getByRole('button', { name: `Like ${site.name}` }).waitFor()

  // Back on the first visitor's page: unlike, and the count drops back.
  await page.goto(`/discover?search=${encodeURIComponent(site.user.username)}`)
  await card.getByRole('button', { name: `Unlike ${site.name}` }).click()
  await card.getByRole('button', { name: `Like ${site.name}` }).waitFor()
  assert.equal((await card.getByTestId('like-count').textContent()).trim(), '0')

  await showInDiscover(ctx, site, page)
}

/** The owner hides the app from Discover on its project page, then shows it again. */
async function showInDiscover({ newPage }, site, visitor) {
  const owner = await newPage({ token: site.token })
  await owner.goto(`/projects/${site.projectId}`)
  await owner.getByRole('heading', { level: 1, name: site.name }).waitFor()
  const toggle = owner.getByRole('switch', { name: 'Show in Discover' })
  assert.equal(await toggle.getAttribute('aria-checked'), 'true')

  const search = `/discover?search=${encodeURIComponent(site.user.username)}`
  const hidden = owner.waitForResponse((r) => r.url().endsWith(`/api/projects/${site.projectId}`) && r.request().method() === 'PUT')
  await toggle.click()
  assert.equal((await hidden).status(), 200)
  await owner.getByText('Your app is no longer listed in Discover').waitFor()
  await owner.getByRole('switch', { name: 'Show in Discover', checked: false }).waitFor()

  // The visitor no longer finds it, by search or on the landing page.
  await visitor.goto(search)
  await visitor.getByText('No apps found').waitFor()
  assert.equal(await visitor.getByTestId('app-card').count(), 0)
  const featured = visitor.waitForResponse((r) => r.url().includes('/api/deployments/public?') && r.request().method() === 'GET')
  await visitor.goto('/')
  const answer = await (await featured).json()
  assert.ok(!answer.data.deployments.some((d) => d.project.name === site.name), JSON.stringify(answer.data.deployments))
  await visitor.getByRole('heading', { name: 'Featured Student Projects' }).waitFor()
  assert.equal(await visitor.getByRole('listitem').filter({ hasText: site.name }).count(), 0)

  // The page remembers the choice.
  await owner.reload()
  await owner.getByRole('switch', { name: 'Show in Discover', checked: false }).waitFor()
  await owner.getByRole('switch', { name: 'Show in Discover' }).click()
  await owner.getByText('Your app is now listed in Discover').waitFor()
  await owner.getByRole('switch', { name: 'Show in Discover', checked: true }).waitFor()

  await visitor.goto(search)
  await visitor.getByTestId('app-card').filter({ hasText: site.name }).waitFor()
  await visitor.getByText('Showing 1 of 1 app', { exact: true }).waitFor()
}
