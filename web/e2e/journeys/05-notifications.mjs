// A build fails while the student is on the dashboard: within one polling
// interval (30 s) the bell shows exactly 1, its dropdown names the failure,
// clicking it opens the failed deployment and the badge clears. The
// notifications page then lists it as read, and clearing them all (after the
// confirmation) leaves the empty state.
import assert from 'node:assert/strict'
import { apiCall } from '../lib/harness.mjs'
import { startGitHost } from '../lib/githost.mjs'

export const title = 'a failed build rings the bell within one polling interval; the notification opens the deployment'

// One polling interval (SPEC §9) and some slack for the request itself.
const POLL_MS = 30_000
const WITHIN_MS = POLL_MS + 5_000

export default async function notificationsJourney({ newPage, uniqueUser, registerViaAPI, apiURL, baseURL }) {
  const host = await startGitHost()
  try {
    const repoURL = await host.addRepo(
      'e2e/broken-build',
      {
        'package.json': JSON.stringify({
          name: 'broken-build',
          version: '1.0.0',
          private: true,
          scripts: { build: 'echo "compiling…" && exit 1' },
        }),
      },
      'Break the build',
    )
    const token = await registerViaAPI(uniqueUser('ntf'))
    const call = async (method, path, body) => {
      const { status, json } = await apiCall(apiURL, method, path, body, token)
      assert.ok(status >= 200 && status < 300, `${method} ${path}: ${status} ${JSON.stringify(json)}`)
      return json.data
    }

    // The project exists; its notification and the welcome are read, so the
    // count below is exactly the failure's.
    const { project } = await call('POST', '/api/projects/public', {
      repository: { url: repoURL },
      name: 'Broken Build',
      description: 'A build script that exits 1',
      branch: 'main',
      buildConfig: {},
    })
    const before = await call('GET', '/api/notifications')
    assert.deepEqual(before.notifications.map((n) => n.title).sort(), ['Project created', 'Welcome to Gantry'])
    await call('PATCH', '/api/notifications/read-all')

    const page = await newPage({ token })
    await page.goto('/dashboard')
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor()
    const bell = page.getByRole('button', { name: /^Notifications/ })
    await bell.waitFor()
    assert.equal(await bell.getAttribute('aria-label'), 'Notifications')
    assert.equal(await page.getByTestId('notification-badge').count(), 0)

    // The build fails (the deployment is started through the API: the
    // deploy journey covers the screens that start one).
    const { deployment } = await call('POST', '/api/deployments', { projectId: project._id, version: '1.0.0' })
    let failedAt
    for (const deadline = Date.now() + 90_000; ; ) {
      const { deployment: d } = await call('GET', `/api/deployments/${deployment._id}`)
      if (d.status === 'failed') {
        failedAt = Date.now()
        break
      }
      assert.ok(!['live', 'stopped'].includes(d.status), `the build should fail, it is ${d.status}`)
      assert.ok(Date.now() < deadline, `the build is still ${d.status} after 90 s`)
      await new Promise((r) => setTimeout(r, 250))
    }

    // Within one polling interval the bell shows 1, without reloading.
    const badge = page.getByTestId('notification-badge')
    await badge.waitFor({ timeout: WITHIN_MS - (Date.now() - failedAt) })
    assert.equal((await badge.textContent()).trim(), '1')
    assert.equal(await bell.getAttribute('aria-label'), 'Notifications, 1 unread')
    assert.ok(Date.now() - failedAt <= WITHIN_MS, `the bell took ${Date.now() - failedAt} ms`)

    // The dropdown names the failure with its reason; clicking it opens the deployment.
    await bell.click()
    const panel = page.getByRole('dialog', { name: 'Notifications' })
    const item = panel.getByRole('button', { name: /Deployment failed/ })
    await item.waitFor()
    await item.getByRole('img', { name: 'Error notification' }).waitFor()
    const text = await item.textContent()
    assert.match(text, /Broken Build failed: .*exited with code 1/)
    assert.match(text, /Just now|1m ago/)
    await item.click()
    await page.waitForURL(`${baseURL}/deployments/${deployment._id}`)
    await page.getByRole('heading', { level: 1, name: 'Broken Build Deployment' }).waitFor()
    await page.getByRole('img', { name: 'Status: Failed' }).first().waitFor()

    // The badge clears at once, and stays cleared after the next refetch.
    await badge.waitFor({ state: 'detached', timeout: 5_000 })
    assert.equal(await bell.getAttribute('aria-label'), 'Notifications')
    const after = await call('GET', '/api/notifications')
    assert.equal(after.unreadCount, 0)
    const failed = after.notifications.find((n) => n.title === 'Deployment failed')
    assert.equal(failed.type, 'error')
    assert.equal(failed.actionUrl, `/deployments/${deployment._id}`)
    assert.equal(failed.read, true)

    // The notifications page lists it (read); Clear all asks first.
    await page.goto('/notifications')
    await page.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor()
    const list = page.getByRole('list', { name: 'Notifications' })
    await list.getByText('Deployment failed').waitFor()
    assert.equal(await list.getByRole('listitem').count(), 3)
    await page.getByRole('button', { name: 'Unread 0' }).click()
    await page.getByText("You're all caught up").waitFor()
    await page.getByRole('button', { name: 'Clear all' }).click()
    const dialog = page.getByRole('dialog', { name: 'Clear all notifications?' })
    await dialog.getByText('All 3 notifications will be deleted. This cannot be undone.').waitFor()
    await dialog.getByRole('button', { name: 'Clear all' }).click()
    await page.getByText('No notifications yet').waitFor()
    assert.equal((await call('GET', '/api/notifications')).total, 0)
  } finally {
    await host.stop()
  }
}
