#!/usr/bin/env node
// The GitHub connect journey in real Chromium against the real binary and
// the fake GitHub (internal/githost/githubtest/ghserve), which the usual
// runner does not start:
//
//   cd web && GANTRY_BIN=/abs/bin/gantry node e2e/github-journey.mjs
//
// It builds and starts ghserve (or runs GHSERVE_BIN), then `gantry serve`
// configured with it, and walks: GitHub Integration → Connect GitHub → the
// fake authorize page → the callback (answered with Referrer-Policy:
// no-referrer; the web app finishes the sign-in with its own session and
// the __Host- nonce cookie, keeps its token, cleans code and state out of
// the address and history entry, no request carrying them in its Referer;
// 2 s → /dashboard) → the account and its
// repositories → the detail modal → Deploy This Repository →
// /projects/new?repo=<id>; then push to deploy (below), Refresh and
// Disconnect. Prints "ok" and exits 0, or the failure and exits 1.
//
// Push to deploy: the portfolio repository is deployed from the New Project
// page (its webhook is registered at the fake), then a commit is pushed to
// it and the fake delivers the signed push event: the new deployment shows
// up on the project page by itself ("Pushed by …"), goes Live and the site
// serves the new page; promoting the first deployment from the History
// brings the old page back, with no build.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import http from 'node:http'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { E2E_DIR, launchBrowser, registerViaAPI, startServer, uniqueUser } from './lib/harness.mjs'

/** Builds ghserve into a temporary folder, unless GHSERVE_BIN names one. */
let buildDir = null

async function ghserveBinary() {
  if (process.env.GHSERVE_BIN) return process.env.GHSERVE_BIN
  buildDir = await mkdtemp(path.join(os.tmpdir(), 'ghserve-bin-'))
  const bin = path.join(buildDir, 'ghserve')
  const root = path.resolve(E2E_DIR, '..', '..')
  await new Promise((resolve, reject) => {
    const go = spawn('go', ['build', '-o', bin, './internal/githost/githubtest/ghserve'], { cwd: root, stdio: 'inherit' })
    go.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`go build ghserve: exit ${code}`))))
  })
  return bin
}

/** Starts the fake GitHub and resolves with its base URL once it listens. */
async function startFakeGitHub() {
  const child = spawn(await ghserveBinary(), [], { stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    child.on('exit', (code) => reject(new Error(`ghserve exited with ${code}`)))
    child.stdout.on('data', (chunk) => {
      out += chunk
      const m = out.match(/listening on (http:\/\/\S+)/)
      if (m) resolve({ url: m[1], stop: () => child.kill('SIGTERM') })
    })
  })
}

async function journey() {
  const gh = await startFakeGitHub()
  Object.assign(process.env, {
    GANTRY_GITHUB_CLIENT_ID: 'test-client-id',
    GANTRY_GITHUB_CLIENT_SECRET: 'test-client-secret',
    GANTRY_GITHUB_API_URL: `${gh.url}/api/v3/`,
    GANTRY_GITHUB_WEB_URL: gh.url,
  })
  let server
  let browser
  try {
    server = await startServer(process.env.GANTRY_BIN)
    browser = await launchBrowser()
    const token = await registerViaAPI(server.apiURL, { ...uniqueUser('gh'), fullName: 'Maya Chen' })
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: server.baseURL })
    await context.addInitScript((tok) => {
      if (!sessionStorage.getItem('e2e-token-set')) {
        localStorage.setItem('token', tok)
        sessionStorage.setItem('e2e-token-set', '1')
      }
    }, token)
    const page = await context.newPage()
    page.setDefaultTimeout(10_000)
    const pageErrors = []
    page.on('pageerror', (err) => pageErrors.push(err))
    // Every Referer the browser sends, and the answers of the callback's
    // redirect and page: none may pass GitHub's code on.
    const referers = []
    page.on('request', (req) => {
      referers.push(req.allHeaders().then((h) => h.referer ?? ''))
    })
    const callbackAnswers = []
    page.on('response', (res) => {
      const { pathname } = new URL(res.url())
      if (res.request().method() === 'GET' && (pathname === '/github-callback' || pathname === '/api/auth/github/callback')) {
        callbackAnswers.push({ pathname, policy: res.headers()['referrer-policy'], cache: res.headers()['cache-control'] })
      }
    })

    await page.goto('/github-integration')
    await page.getByRole('heading', { name: 'Connect your GitHub account' }).waitFor()
    await page.getByRole('button', { name: 'Connect GitHub' }).click()

    // The fake consents at once; GitHub sends the browser to the callback.
    await page.getByText('GitHub account linked successfully! Redirecting...').waitFor()
    const landed = new URL(page.url())
    assert.equal(landed.pathname, '/github-callback')
    assert.equal(landed.searchParams.get('code'), null, 'the code is removed from the address')
    assert.equal(await page.evaluate(() => /code=|state=|token=/.test(location.href)), false, 'the history entry holds no code, state or token')
    assert.deepEqual(
      callbackAnswers.map((a) => [a.pathname, a.policy]),
      [
        ['/api/auth/github/callback', 'no-referrer'],
        ['/github-callback', 'no-referrer'],
      ],
      'the callback redirect and page answer Referrer-Policy: no-referrer',
    )
    assert.equal(callbackAnswers[1].cache, 'no-store', 'the callback page is not cached')
    const stored = await page.evaluate(() => localStorage.getItem('token'))
    assert.equal(stored, token, 'the session that started the sign-in finished it: no new token')
    assert.deepEqual(
      (await context.cookies()).filter((c) => c.name.includes('github')),
      [],
      'the nonce cookie is forgotten once used',
    )
    await page.waitForURL(`${server.baseURL}/dashboard`, { timeout: 5000 })
    for (const referer of await Promise.all(referers)) {
      assert.ok(!/token=|code=/.test(referer), `a request carried the token or code in its Referer: ${referer}`)
    }

    await page.goto('/github-integration')
    await page.getByText('@maya-chen').waitFor()
    await page.getByText('5 repositories available to deploy').waitFor()
    await page.getByRole('button', { name: /^maya-chen\/thesis-dashboard, private/ }).click()
    const dialog = page.getByRole('dialog', { name: 'thesis-dashboard' })
    await dialog.getByText('Repository ID').waitFor()
    assert.equal(
      await dialog.getByRole('link', { name: 'View on GitHub' }).getAttribute('href'),
      `${gh.url}/maya-chen/thesis-dashboard`,
    )
    await dialog.getByRole('link', { name: 'Deploy This Repository' }).click()
    await page.waitForURL(/\/projects\/new\?repo=\d+$/)

    await pushToDeploy(page, server, gh, stored)
    await privatePreview(page, browser, server, gh, stored)

    await page.goto('/github-integration')
    await page.getByRole('button', { name: 'Refresh Repositories' }).click()
    await page.getByText('GitHub repositories refreshed successfully').waitFor()
    await page.getByRole('button', { name: 'Disconnect GitHub' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Disconnect GitHub' }).click()
    await page.getByText('GitHub account disconnected successfully').waitFor()
    await page.getByRole('button', { name: 'Connect GitHub' }).waitFor()
    assert.deepEqual(pageErrors, [])
  } finally {
    await browser?.close()
    await server?.stop()
    gh.stop()
    if (buildDir) await rm(buildDir, { recursive: true, force: true })
  }
}

/**
 * A private repository's preview (issue 24): a stranger's browser is asked
 * to sign in and never sees it; the owner's browser is let in through the
 * platform's hand-off (a cookie on the preview's own host); once the owner
 * flips "Anyone with the link can open previews", the stranger sees it too.
 */
async function privatePreview(page, browser, server, gh, token) {
  const { user } = await apiGet(server, token, '/api/auth/me')
  const repo = user.github.repos.find((r) => r.fullName === 'maya-chen/thesis-dashboard')
  assert.ok(repo?.private, 'thesis-dashboard is private')
  const created = await fetch(`${server.apiURL}/api/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ repositoryId: repo.id, name: 'Thesis' }),
  })
  assert.equal(created.status, 201, `create the thesis project: ${created.status}`)
  const { project } = (await created.json()).data
  const pushed = await fetch(`${gh.url}/_githubtest/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      repo: 'maya-chen/thesis-dashboard',
      branch: 'draft',
      message: 'Draft of chapter 3',
      files: { 'index.html': '<!doctype html><title>Thesis</title><h1>Draft chapter</h1>' },
    }),
  })
  assert.equal(pushed.status, 200, `the fake's push: ${pushed.status}`)
  let preview
  for (const until = Date.now() + 90_000; Date.now() < until; await new Promise((r) => setTimeout(r, 300))) {
    preview = (await apiGet(server, token, `/api/projects/${project._id}/previews`)).previews[0]
    if (preview && !['pending', 'building', 'deploying'].includes(preview.status)) break
  }
  assert.equal(preview?.status, 'live', `the draft's preview: ${JSON.stringify(preview)}`)

  // A stranger: sent to sign in; the page never reaches them.
  const raw = await getRaw(preview.url)
  assert.equal(raw.status, 302, 'a stranger is redirected')
  assert.ok(raw.location.startsWith(`${server.baseURL}/preview-access?`), `redirected to ${raw.location}`)
  assert.ok(!raw.body.includes('Draft chapter'))
  const stranger = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const other = await stranger.newPage()
  await other.goto(preview.url)
  await other.getByRole('heading', { name: 'Sign in to open this preview' }).waitFor()
  assert.equal(await other.getByText('Draft chapter').count(), 0)

  // The owner: through the hand-off to the page, with a cookie of that host only.
  await page.goto(preview.url)
  await page.getByRole('heading', { name: 'Draft chapter' }).waitFor({ timeout: 15_000 })
  assert.equal(new URL(page.url()).host, new URL(preview.url).host)
  const cookies = await page.context().cookies(preview.url)
  const pass = cookies.find((c) => c.name === '__Host-gantry_preview')
  assert.ok(pass?.secure && pass.httpOnly && pass.path === '/', `the preview's cookie: ${JSON.stringify(cookies)}`)

  // Opened by its owner, the preview is anyone's.
  await page.goto(`/projects/${project._id}`)
  const toggle = page.getByRole('switch', { name: 'Anyone with the link can open previews' })
  await toggle.click()
  await page.getByText('Previews are open to anyone with the link').waitFor()
  await other.goto(preview.url)
  await other.getByRole('heading', { name: 'Draft chapter' }).waitFor({ timeout: 10_000 })
  await stranger.close()
}

/** GETs url from 127.0.0.1 (its host in the Host header) without following redirects. */
function getRaw(url) {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: u.port, path: u.pathname, headers: { host: u.host } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode, location: res.headers.location ?? '', body }))
    })
    req.on('error', reject)
  })
}

/** GET path on the API with the session's token; answers the data. */
async function apiGet(server, token, path) {
  const res = await fetch(`${server.apiURL}${path}`, { headers: { authorization: `Bearer ${token}` } })
  assert.equal(res.status, 200, `GET ${path}: ${res.status}`)
  return (await res.json()).data
}

/** GETs url from 127.0.0.1 with its host name in the Host header (Node does not resolve *.localhost). */
function getPage(url) {
  const u = new URL(url)
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port: u.port, path: u.pathname, headers: { host: u.host } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => (body += c))
      res.on('end', () => resolve(body))
    })
    req.on('error', (e) => resolve(String(e)))
  })
}

/** Waits until the live site answers a page holding text. */
async function siteShows(url, text, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < until) {
    last = await getPage(url)
    if (last.includes(text)) return
    await new Promise((r) => setTimeout(r, 200))
  }
  assert.fail(`${url} never showed ${JSON.stringify(text)}; last answer: ${last.slice(0, 200)}`)
}

async function pushToDeploy(page, server, gh, token) {
  await page.goto('/github-integration')
  await page.getByRole('button', { name: /^maya-chen\/portfolio/ }).click()
  await page.getByRole('dialog', { name: 'portfolio' }).getByRole('link', { name: 'Deploy This Repository' }).click()
  await page.waitForURL(/\/projects\/new\?repo=\d+$/)
  await page.getByRole('button', { name: 'Create & Deploy Project' }).click()
  await page.waitForURL(/\/deployments\/[^/]+$/, { timeout: 15_000 })
  await page.getByRole('img', { name: 'Status: Live' }).waitFor({ timeout: 90_000 })

  const [project] = (await apiGet(server, token, '/api/projects')).projects.filter((p) => p.name === 'portfolio')
  assert.ok(project, 'the project was created')
  const port = new URL(server.baseURL).port
  const siteURL = `http://${project.subdomain}.localhost:${port}/`
  await siteShows(siteURL, '<h1>Maya Chen</h1>')
  const hooks = await apiGet(server, token, `/api/projects/${project._id}/github`)
  assert.equal(hooks.webhook?.active, true, 'the webhook is registered at GitHub')

  await page.goto(`/projects/${project._id}`)
  const history = page.getByRole('list', { name: 'Production deployments' })
  await history.getByTestId('history-row').first().waitFor()
  assert.equal(await history.getByTestId('history-row').count(), 1)

  // A commit is pushed; the fake signs and delivers the push event.
  const res = await fetch(`${gh.url}/_githubtest/push`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      repo: 'maya-chen/portfolio',
      branch: 'main',
      message: 'Say hello from a push',
      files: { 'index.html': '<!doctype html><title>Portfolio</title><h1>Hello from a push</h1>' },
    }),
  })
  assert.equal(res.status, 200, `the fake's push: ${res.status}`)
  const deliveries = await res.json()
  assert.deepEqual(deliveries.map((d) => d.status), [202], 'Gantry accepted the delivery')

  // The page shows the new deployment on its own, as the pusher's, and it goes live.
  const pushed = history.getByTestId('history-row').filter({ hasText: 'Say hello from a push' })
  await pushed.waitFor({ timeout: 30_000 })
  await pushed.getByText(/^Pushed by /).waitFor()
  await pushed
    .locator('[data-status="live"]')
    .waitFor({ timeout: 90_000 })
    .catch(async (err) => {
      const { deployments } = await apiGet(server, token, `/api/deployments?projectId=${project._id}`)
      for (const d of deployments) {
        const { logs } = await apiGet(server, token, `/api/deployments/${d._id}/logs?limit=200`)
        console.error(d.status, d.metadata?.commitMessage, d.error ?? '', logs.map((e) => e.message).join('\n  '))
      }
      throw err
    })
  await siteShows(siteURL, '<h1>Hello from a push</h1>')
  const production = page.getByTestId('production-card')
  await production.getByText('Say hello from a push').waitFor({ timeout: 15_000 })

  // Promote the first deployment back: the old page, and no new build.
  const first = history.getByTestId('history-row').filter({ hasNotText: 'Say hello from a push' })
  await first.getByRole('button', { name: /^Promote / }).click()
  const dialog = page.getByRole('dialog', { name: 'Promote to production?' })
  await dialog.getByRole('button', { name: 'Promote' }).click()
  await siteShows(siteURL, '<h1>Maya Chen</h1>', 10_000)
  await production.getByTestId('production-trigger').filter({ hasText: 'Rollback' }).waitFor({ timeout: 15_000 })
  await first.getByText('Current').waitFor()
  const all = await apiGet(server, token, `/api/deployments?projectId=${project._id}`)
  assert.equal(all.deployments.length, 2, 'promoting built nothing')
}

journey().then(
  () => {
    console.log('ok')
    process.exit(0)
  },
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
