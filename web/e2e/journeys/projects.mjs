// A student imports a public repository from a git host on loopback: the
// detected framework shows, the project is created, its detail page shows
// the repository, the last commit and the build configuration, it is edited,
// then deleted with its confirmation.
import assert from 'node:assert/strict'
import { startGitHost } from '../lib/githost.mjs'

export const title = 'student imports a public repository, reviews and edits the project, then deletes it'

export default async function projectsJourney({ newPage, uniqueUser, baseURL }) {
  const host = await startGitHost()
  try {
    const user = uniqueUser('prj')
    const repoURL = await host.addRepo(
      'e2e/vite-app',
      {
        'package.json': JSON.stringify({
          name: 'vite-app',
          private: true,
          scripts: { dev: 'vite', build: 'vite build' },
          dependencies: { react: '^19.0.0', 'react-dom': '^19.0.0' },
          devDependencies: { vite: '^8.0.0', '@vitejs/plugin-react': '^6.0.0' },
        }),
        'index.html': '<!doctype html><div id="root"></div><script type="module" src="/src/main.jsx"></script>',
        'src/main.jsx': 'console.log("hi")',
      },
      'Add the landing page',
    )
    const page = await newPage()

    await page.goto('/register')
    await page.getByLabel('Full name').fill(user.fullName)
    await page.getByLabel('Username').fill(user.username)
    await page.getByLabel('Email address').fill(user.email)
    await page.getByLabel('Password', { exact: true }).fill(user.password)
    await page.getByLabel('Confirm password').fill(user.password)
    await page.getByRole('checkbox', { name: /i agree to the terms/i }).check()
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(`${baseURL}/dashboard`)

    // New Project → Any Public Repository → Load Repository: React is detected.
    await page.goto('/projects/new')
    await page.getByRole('button', { name: 'Any Public Repository', exact: true }).click()
    await page.getByLabel('Repository URL').fill(repoURL)
    await page.getByRole('button', { name: 'Load Repository' }).click()
    await page.getByText('Repository e2e/vite-app loaded successfully').waitFor({ timeout: 30_000 })
    await page.getByTestId('framework').getByText('React').waitFor()
    assert.equal(await page.getByLabel('Output directory').inputValue(), 'dist')
    assert.equal(await page.getByLabel('Build command').inputValue(), 'npm run build')

    const name = `Vite ${user.username}`
    await page.getByLabel('Project name').fill(name)
    await page.getByRole('button', { name: 'Create & Deploy Project' }).click()
    await page.getByText('Project created successfully!').waitFor()
    await page.waitForURL(/\/deployments\/[^/]+$/, { timeout: 15_000 })

    // The detail page shows the repository, the last commit and the build configuration.
    await page.locator('aside').getByRole('link', { name: 'Projects' }).click()
    await page.getByRole('link', { name: `View Details of ${name}` }).click()
    await page.getByRole('heading', { level: 1, name }).waitFor()
    await page.getByText('Repository Information').waitFor()
    await page.getByText('e2e/vite-app').first().waitFor()
    await page.getByText('Add the landing page').first().waitFor()
    const main = await page.locator('main').innerText()
    const build = main.slice(main.indexOf('Build Configuration'), main.indexOf('Latest Commit'))
    assert.match(build, /Build command\s+npm run build/, build)
    assert.match(build, /Output directory\s+dist/, build)

    // Edit: rename it and change the output directory.
    await page.getByRole('link', { name: 'Edit' }).click()
    await page.waitForURL(/\/projects\/[^/]+\/edit$/)
    await page.getByLabel('Project name').fill(`${name} v2`)
    await page.getByLabel('Description').fill('My portfolio, now with a contact form')
    await page.getByRole('button', { name: 'Save Changes' }).click()
    await page.getByText('Project updated successfully!').waitFor()
    await page.getByRole('heading', { level: 1, name: `${name} v2` }).waitFor({ timeout: 10_000 })
    await page.getByText('My portfolio, now with a contact form').first().waitFor()

    // Delete, with its confirmation.
    await page.getByRole('button', { name: 'Delete' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByText('Are you sure you want to delete this project? This action cannot be undone.').waitFor()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await page.getByText('Project deleted successfully. Redirecting to projects...').waitFor()
    await page.waitForURL(`${baseURL}/projects`)
    await page.getByText('No projects yet').waitFor()
  } finally {
    await host.stop()
  }
}
