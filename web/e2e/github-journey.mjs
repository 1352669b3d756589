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
// no-referrer; token stored, address and history entry cleaned, no request
// carrying it in its Referer; 2 s → /dashboard) → the account and its
// repositories → the detail modal → Deploy This Repository →
// /projects/new?repo=<id>; then Refresh and
// Disconnect. Prints "ok" and exits 0, or the failure and exits 1.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
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
    // redirect and page: none may pass the token on.
    const referers = []
    page.on('request', (req) => {
      referers.push(req.allHeaders().then((h) => h.referer ?? ''))
    })
    const callbackAnswers = []
    page.on('response', (res) => {
      const { pathname } = new URL(res.url())
      if (pathname === '/github-callback' || pathname === '/api/auth/github/callback') {
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
    assert.equal(landed.searchParams.get('token'), null, 'the token is removed from the address')
    assert.equal(await page.evaluate(() => location.href.includes('token')), false, 'the history entry holds no token')
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
    assert.ok(stored && stored !== token, 'the callback stores a fresh token')
    await page.waitForURL(`${server.baseURL}/dashboard`, { timeout: 5000 })
    for (const referer of await Promise.all(referers)) {
      assert.ok(!referer.includes('token='), `a request carried the token in its Referer: ${referer}`)
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
