// A student deploys a full-stack Express app from a git host on loopback:
// the new-project form proposes its start command, the deployment goes live
// once the app answers, its subdomain shows the app's own answer, and the
// app's output appears under the Runtime filter of the Logs panel.
import assert from 'node:assert/strict'
import { startGitHost } from '../lib/githost.mjs'

export const title = 'student deploys an Express app, visits it and reads its runtime logs'

/** An Express app that answers with `marker` and logs each request. */
function expressApp(marker) {
  return {
    'package.json': JSON.stringify(
      {
        name: 'fullstack-demo',
        version: '1.0.0',
        main: 'server.js',
        scripts: { start: 'node server.js' },
        dependencies: { express: '^4.21.2' },
      },
      null,
      2,
    ),
    'server.js': `const express = require('express')
const app = express()
app.get('/', (req, res) => {
  console.log('served ' + req.path + ' to ' + (req.headers['x-forwarded-for'] || 'someone'))
  res.send('<!doctype html><title>Fullstack</title><h1>Hello from Express</h1><p id="marker">${marker}</p>')
})
app.get('/api/time', (req, res) => res.json({ now: new Date().toISOString() }))
app.listen(process.env.PORT, () => console.log('express listening on port ' + process.env.PORT))
`,
  }
}

export default async function fullstackJourney({ newPage, uniqueUser, registerViaAPI, baseURL }) {
  const host = await startGitHost()
  try {
    const user = uniqueUser('app')
    const token = await registerViaAPI(user)
    const marker = `gantry-e2e-app-${user.username}`
    const repoURL = await host.addRepo('e2e/fullstack', expressApp(marker))
    const page = await newPage({ token })

    await page.goto('/projects/new')
    await page.getByRole('button', { name: 'Any Public Repository', exact: true }).click()
    await page.getByLabel('Repository URL').fill(repoURL)
    await page.getByRole('button', { name: 'Load Repository' }).click()
    await page.getByText('Repository e2e/fullstack loaded successfully').waitFor({ timeout: 30_000 })
    await page.getByTestId('framework').getByText('Express').waitFor()
    // Detection proposes the start command: a server app, no output folder.
    assert.equal(await page.getByLabel('Start command (optional)').inputValue(), 'npm start')
    assert.equal(await page.getByLabel('Output directory').inputValue(), '')

    const projectName = `App ${user.username}`
    await page.getByLabel('Project name').fill(projectName)
    await page.getByRole('button', { name: 'Create & Deploy Project' }).click()
    await page.waitForURL(/\/deployments\/[^/]+$/, { timeout: 15_000 })
    await page.getByRole('heading', { level: 1, name: `${projectName} Deployment` }).waitFor()

    // Live once npm install has run and the app answers on its port.
    const log = page.getByRole('log', { name: 'Log entries' })
    await log.getByText(/App answered on port 3000/).waitFor({ timeout: 120_000 })
    await page.getByRole('img', { name: 'Status: Live' }).waitFor({ timeout: 30_000 })

    // Visit Site: the app's own answer on the project's subdomain.
    const subdomain = (await page.getByTestId('deployment-subdomain').textContent()).trim()
    const origin = `${new URL(baseURL).protocol}//${subdomain}.localhost:${new URL(baseURL).port}`
    const [site] = await Promise.all([page.waitForEvent('popup'), page.getByRole('link', { name: 'Visit Site' }).click()])
    await site.waitForLoadState()
    assert.equal(new URL(site.url()).origin, origin)
    await site.getByRole('heading', { name: 'Hello from Express' }).waitFor()
    await site.getByText(marker).waitFor()
    // Its API answers the page's own fetch (same origin, through the edge).
    const api = await site.evaluate(async () => {
      const res = await fetch('/api/time')
      return { status: res.status, body: await res.json() }
    })
    assert.equal(api.status, 200)
    assert.match(api.body.now, /^\d{4}-/)

    // Runtime filter: the app's output, and only it.
    await page.getByLabel('Type').selectOption('runtime')
    await log.getByText('express listening on port 3000').waitFor({ timeout: 30_000 })
    await log.getByText(/^served \/ to /).first().waitFor({ timeout: 30_000 })
    assert.equal(await log.getByText('Build started').count(), 0, 'build lines are not runtime lines')
    await page.getByLabel('Type').selectOption('all')
    await log.getByText('Build started').waitFor()
  } finally {
    await host.stop()
  }
}
