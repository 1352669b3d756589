// A student saves a secret in the variables editor, changes its scope, tries
// to rename it without typing it again (refused, with the reason), and the
// production build still gets the value first typed: the editor and the
// server agree that a kept secret is never replaced by its mask.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { startGitHost } from '../lib/githost.mjs'
import { apiCall } from '../lib/harness.mjs'

export const title = 'student changes the scope of a saved secret and the build still gets it'

/** A site whose build writes the SHA-256 of API_KEY (or "unset") into its page. */
const secretSite = {
  'package.json': JSON.stringify({ name: 'secret-site', version: '1.0.0', scripts: { build: 'node build.js' } }),
  'build.js': `const fs = require('fs')
const v = process.env.API_KEY
fs.mkdirSync('dist', { recursive: true })
fs.writeFileSync('dist/index.html', v === undefined ? 'unset' : 'sha256:' + require('crypto').createHash('sha256').update(v).digest('hex'))
`,
}

export default async function secretsJourney({ newPage, uniqueUser, registerViaAPI, baseURL, apiURL }) {
  const host = await startGitHost()
  try {
    const user = uniqueUser('sec')
    const token = await registerViaAPI(user)
    const repoURL = await host.addRepo('e2e/secret-site', secretSite)
    const created = await apiCall(
      apiURL,
      'POST',
      '/api/projects/public',
      {
        repository: { url: repoURL },
        name: `Secret ${user.username}`,
        branch: 'main',
        buildConfig: { buildCommand: 'npm run build', outputDirectory: 'dist' },
      },
      token,
    )
    assert.equal(created.status, 201, JSON.stringify(created.json))
    const projectId = created.json.data.project._id
    const secret = `sk_live_${user.username}`

    const page = await newPage({ token })
    await page.goto(`/projects/${projectId}/edit`)
    const form = page.getByRole('form', { name: 'Environment variables' })
    await form.getByText('No variables yet.').waitFor()
    const save = async () => {
      const put = page.waitForResponse((r) => r.url().endsWith(`/api/projects/${projectId}/env`) && r.request().method() === 'PUT')
      await form.getByRole('button', { name: 'Save Variables' }).click()
      return put
    }

    // A new secret.
    await form.getByRole('button', { name: 'Add Variable' }).click()
    await form.getByLabel('Name').fill('API_KEY')
    await form.getByRole('checkbox', { name: 'Secret' }).check()
    await form.getByLabel('Value').fill(secret)
    assert.equal((await save()).status(), 200)
    await form.getByLabel('Value').and(page.locator('[placeholder="Unchanged (hidden)"]')).waitFor()

    // Its scope changed, its value left empty: kept.
    await form.getByLabel('Scope').selectOption('production')
    assert.equal((await save()).status(), 200)
    await page.reload()
    await form.getByLabel('Value').and(page.locator('[placeholder="Unchanged (hidden)"]')).waitFor()
    assert.equal(await form.getByLabel('Scope').inputValue(), 'production')

    // Renamed without its value: the editor asks for it, nothing is sent.
    let puts = 0
    page.on('request', (r) => {
      if (r.method() === 'PUT' && r.url().endsWith('/env')) puts += 1
    })
    await form.getByLabel('Name').fill('API_TOKEN')
    await form.getByRole('button', { name: 'Save Variables' }).click()
    await form.getByText('Type the value of API_TOKEN again: the saved secret stays with the name API_KEY').waitFor()
    assert.equal(puts, 0)

    // The server refuses the same through the API, and a body without variables.
    const refused = await apiCall(
      apiURL,
      'PUT',
      `/api/projects/${projectId}/env`,
      { variables: [{ key: 'API_TOKEN', value: '••••••••', isSecret: true, scope: 'production' }] },
      token,
    )
    assert.equal(refused.status, 400)
    assert.match(refused.json.message, /^Enter the value of API_TOKEN: /)
    assert.equal((await apiCall(apiURL, 'PUT', `/api/projects/${projectId}/env`, {}, token)).status, 400)

    // The production build gets the secret first typed.
    const dep = await apiCall(apiURL, 'POST', '/api/deployments', { projectId }, token)
    assert.equal(dep.status, 201, JSON.stringify(dep.json))
    const id = dep.json.data.deployment._id
    let status = ''
    for (let i = 0; i < 240 && !['live', 'failed'].includes(status); i++) {
      await new Promise((r) => setTimeout(r, 500))
      status = (await apiCall(apiURL, 'GET', `/api/deployments/${id}`, undefined, token)).json.data.deployment.status
    }
    assert.equal(status, 'live')
    const subdomain = dep.json.data.deployment.subdomain
    const site = await newPage()
    await site.goto(`${new URL(baseURL).protocol}//${subdomain}.localhost:${new URL(baseURL).port}/`)
    const want = 'sha256:' + createHash('sha256').update(secret).digest('hex')
    assert.equal((await site.locator('body').textContent()).trim(), want)
  } finally {
    await host.stop()
  }
}
