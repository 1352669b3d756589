// A student's server app falls asleep after going unused (GANTRY_APP_IDLE,
// 10 s in the harness): every screen that shows its status says Sleeping,
// "Always on" is refused on the free plan, and a visit wakes it — the
// browser gets the "Waking up…" page (after 1 s here: the app takes 2.5 s to
// listen), which reloads itself into the app's own answer. The waking page
// is also saved as screenshots, light and dark, desktop and phone.
import assert from 'node:assert/strict'
import path from 'node:path'
import { mkdir } from 'node:fs/promises'
import { SCREENSHOT_DIR, apiCall } from '../lib/harness.mjs'
import { startGitHost } from '../lib/githost.mjs'

export const title = 'a server app sleeps, shows Sleeping everywhere and wakes when visited'

/** A dependency-free node server that takes 2.5 s to start listening. */
function slowApp(marker) {
  return {
    'index.html': '<h1>not served: the start command makes this a server app</h1>',
    'server.js': `const http = require('http')
const server = http.createServer((req, res) => {
  res.setHeader('Content-Type', 'text/html')
  res.end('<!doctype html><title>Quiz API</title><h1>Quiz API is up</h1><p id="marker">${marker}</p>')
})
setTimeout(() => server.listen(Number(process.env.PORT)), 2500)
`,
  }
}

async function poll(what, fn, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

export default async function sleepingJourney({ newPage, browser, uniqueUser, registerViaAPI, baseURL, apiURL }) {
  const host = await startGitHost()
  try {
    const user = uniqueUser('nap')
    const token = await registerViaAPI(user)
    const marker = `gantry-e2e-sleep-${user.username}`
    const repoURL = await host.addRepo('e2e/quiz', slowApp(marker))
    const projectName = `Quiz ${user.username}`
    const created = await apiCall(apiURL, 'POST', '/api/projects/public', {
      repository: { url: repoURL },
      name: projectName,
      buildConfig: { startCommand: 'node server.js' },
    }, token)
    assert.equal(created.status, 201, JSON.stringify(created.json))
    const project = created.json.data.project
    const dep = await apiCall(apiURL, 'POST', '/api/deployments', { projectId: project._id }, token)
    assert.equal(dep.status, 201, JSON.stringify(dep.json))
    const id = dep.json.data.deployment._id
    const deployment = async () => (await apiCall(apiURL, 'GET', `/api/deployments/${id}`, undefined, token)).json.data.deployment
    await poll('the app to go live', async () => {
      const d = await deployment()
      if (d.status === 'failed') throw new Error(`deployment failed: ${d.error}`)
      return d.status === 'live'
    })
    // Nobody visits it: it falls asleep, still live.
    await poll('the app to sleep', async () => {
      const d = await deployment()
      return d.status === 'live' && d.sleeping
    })

    const page = await newPage({ token })
    await page.goto('/projects')
    const card = page.getByTestId('project-card').filter({ hasText: projectName })
    await card.getByText('Sleeping', { exact: true }).waitFor()

    await page.goto(`/projects/${project._id}`)
    await page.getByRole('heading', { level: 1, name: projectName }).waitFor()
    await page.locator('[data-status="sleeping"]').first().waitFor()
    // Always on is for paid plans: the free plan is told so.
    await page.getByRole('switch', { name: 'Always on' }).click()
    await page.getByText(/Always on is part of the paid plans .* on your Free plan/).waitFor()
    assert.equal(await page.getByRole('switch', { name: 'Always on' }).getAttribute('aria-checked'), 'false')

    await page.goto(`/deployments/${id}`)
    await page.getByRole('img', { name: 'Status: Sleeping' }).waitFor()

    await page.goto('/dashboard')
    await page.locator('[data-status="sleeping"]').first().waitFor()

    // A visit wakes it: the "Waking up…" page first, then the app itself.
    const origin = `${new URL(baseURL).protocol}//${project.subdomain}.localhost:${new URL(baseURL).port}`
    const site = await newPage()
    await site.goto(origin)
    await site.getByRole('heading', { name: 'Waking up…' }).waitFor()
    const waking = await site.content()
    await site.getByRole('heading', { name: 'Quiz API is up' }).waitFor({ timeout: 30_000 })
    await site.getByText(marker).waitFor()

    await page.goto(`/deployments/${id}`)
    await page.getByRole('img', { name: 'Status: Live' }).waitFor()

    // The waking page, as visitors see it.
    await mkdir(SCREENSHOT_DIR, { recursive: true })
    for (const [device, viewport] of Object.entries({ desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } })) {
      for (const colorScheme of ['light', 'dark']) {
        const context = await browser.newContext({ viewport, colorScheme, javaScriptEnabled: false })
        const shot = await context.newPage()
        await shot.setContent(waking.replace(/<meta http-equiv="refresh"[^>]*>/, ''))
        await shot.screenshot({ path: path.join(SCREENSHOT_DIR, `waking-up-${colorScheme}-${device}.png`) })
        await context.close()
      }
    }
  } finally {
    await host.stop()
  }
}
