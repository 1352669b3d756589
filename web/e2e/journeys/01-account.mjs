// A visitor registers, stays signed in across a reload, signs out, signs in
// again, and is sent from an unknown path to the dashboard.
import assert from 'node:assert/strict'

export const title = 'visitor registers, reloads, signs out and in again'

export default async function accountJourney({ newPage, uniqueUser, baseURL }) {
  const page = await newPage()
  const user = uniqueUser('reg')
  const token = () => page.evaluate(() => localStorage.getItem('token'))

  // The landing page.
  await page.goto('/')
  await page.getByRole('heading', { level: 1, name: /ship your projects/i }).waitFor()
  for (const claim of ['10,000+', '5,000+', '50+', '99.9%']) {
    await page.getByText(claim, { exact: true }).waitFor()
  }
  await page.getByRole('heading', { name: 'Featured Student Projects' }).waitFor()

  // Register.
  await page.getByRole('banner').getByRole('link', { name: 'Get Started' }).click()
  await page.waitForURL(`${baseURL}/register`)
  await page.getByLabel('Full name').fill(user.fullName)
  await page.getByLabel('Username').fill(user.username)
  await page.getByLabel('Email address').fill(user.email)
  await page.getByLabel('Password', { exact: true }).fill(user.password)
  await page.getByLabel('Confirm password').fill(user.password)
  await page.getByRole('checkbox', { name: /i agree to the terms/i }).check()
  await page.getByRole('button', { name: 'Create account' }).click()

  await page.waitForURL(`${baseURL}/dashboard`)
  const sidebar = page.locator('aside')
  const current = sidebar.locator('[aria-current="page"]')
  await current.filter({ hasText: 'Dashboard' }).waitFor()
  await page.getByText(/welcome to gantry/i).first().waitFor()
  assert.ok(await token(), 'a token is stored after registration')

  // The sidebar shows the user, the default role and plan.
  await sidebar.getByText(user.fullName).waitFor()
  await sidebar.getByText('Student', { exact: true }).waitFor()
  await sidebar.getByText('Free plan').waitFor()
  await sidebar.getByText('3 projects · 5 deployments').waitFor()

  // Still signed in after a reload.
  await page.reload()
  await current.filter({ hasText: 'Dashboard' }).waitFor()
  await sidebar.getByText(user.fullName).waitFor()
  assert.equal(new URL(page.url()).pathname, '/dashboard')

  // The profile shows the account.
  await sidebar.getByRole('link', { name: 'Profile' }).click()
  await page.waitForURL(`${baseURL}/profile`)
  assert.equal(await page.getByLabel('Username').inputValue(), user.username)
  assert.equal(await page.getByLabel('Email address').inputValue(), user.email)

  // Sign out.
  await page.getByRole('button', { name: 'Account menu' }).click()
  await page.getByRole('menuitem', { name: 'Sign out' }).click()
  await page.waitForURL(`${baseURL}/`)
  await page.getByText('Logged out successfully').waitFor()
  await page.getByRole('heading', { level: 1, name: /ship your projects/i }).waitFor()
  assert.equal(await token(), null, 'the token is gone after signing out')

  // Sign in again.
  await page.getByRole('banner').getByRole('link', { name: 'Sign In' }).click()
  await page.waitForURL(`${baseURL}/login`)
  await page.getByLabel('Email address').fill(user.email)
  await page.getByLabel('Password', { exact: true }).fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${baseURL}/dashboard`)
  await page.getByText('Login successful!').waitFor()
  assert.ok(await token(), 'a token is stored after signing in')

  // A wrong password is refused with the server's message (in a second,
  // signed-out page, so this session stays).
  const other = await newPage()
  await other.goto('/login')
  await other.getByLabel('Email address').fill(user.email)
  await other.getByLabel('Password', { exact: true }).fill('not-the-password')
  await other.getByRole('button', { name: 'Sign in' }).click()
  const refusal = other.locator('[role="status"]').filter({ hasText: /./ }).first()
  await refusal.waitFor()
  assert.notEqual((await refusal.innerText()).trim(), 'Login failed', 'the server message is shown')
  assert.equal(new URL(other.url()).pathname, '/login')
  assert.equal(await other.evaluate(() => localStorage.getItem('token')), null)

  // Unknown paths go to the dashboard.
  await page.goto('/this/page/does/not/exist')
  await page.waitForURL(`${baseURL}/dashboard`)
  await current.filter({ hasText: 'Dashboard' }).waitFor()

  // Paths below /projects and /deployments highlight their entries.
  for (const [path, entry] of [
    ['/projects/some-id/edit', 'Projects'],
    ['/deployments/some-id', 'Deployments'],
  ]) {
    await page.goto(path)
    await current.filter({ hasText: entry }).waitFor()
    assert.equal(await current.count(), 1)
    assert.equal((await current.innerText()).trim(), entry)
  }
}
