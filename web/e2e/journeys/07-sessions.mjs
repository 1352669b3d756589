// Sessions end on the server: "Sign out everywhere" in one browser sends
// another browser of the same account to /login on its next call, and
// Sign out makes the old token answer 401.
import assert from 'node:assert/strict'
import { apiCall } from '../lib/harness.mjs'

export const title = 'sign out everywhere ends the other browser; sign out kills the token'

export default async function sessionsJourney({ newPage, uniqueUser, registerViaAPI, baseURL, apiURL }) {
  const user = uniqueUser('sess')
  await registerViaAPI(user)
  const tokenOf = (page) => page.evaluate(() => localStorage.getItem('token'))
  const me = (token) => apiCall(apiURL, 'GET', '/api/auth/me', undefined, token)

  async function signIn(page) {
    await page.goto('/login')
    await page.getByLabel('Email address').fill(user.email)
    await page.getByLabel('Password', { exact: true }).fill(user.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${baseURL}/dashboard`)
    const token = await tokenOf(page)
    assert.ok(token, 'a token is stored after signing in')
    return token
  }

  // Two browsers (separate contexts, separate storage), two sessions.
  const laptop = await newPage()
  const phone = await newPage({ viewport: { width: 375, height: 812 } })
  const laptopToken = await signIn(laptop)
  const phoneToken = await signIn(phone)
  assert.notEqual(laptopToken, phoneToken)
  assert.equal((await me(phoneToken)).status, 200)

  // The laptop signs out everywhere from its profile.
  await laptop.goto('/profile')
  await laptop.getByRole('heading', { name: 'Sessions' }).waitFor()
  await laptop.getByRole('button', { name: 'Sign out everywhere' }).click()
  const dialog = laptop.getByRole('dialog', { name: 'Sign out everywhere?' })
  await dialog.getByText('this one included').waitFor()
  await dialog.getByRole('button', { name: 'Sign out everywhere' }).click()
  await laptop.waitForURL(`${baseURL}/login`)
  await laptop.getByText('Signed out everywhere').waitFor()
  await laptop.getByRole('heading', { level: 1, name: 'Welcome back' }).waitFor()
  assert.equal(await tokenOf(laptop), null, 'the laptop forgot its token')

  // Both tokens are dead on the server at once.
  for (const [name, token] of [['laptop', laptopToken], ['phone', phoneToken]]) {
    const { status, json } = await me(token)
    assert.equal(status, 401, `the ${name}'s token after sign out everywhere`)
    assert.equal(json.message, 'Not authorized: please sign in')
  }

  // The phone still shows its dashboard; its next call (opening Projects
  // from its menu) sends it to /login.
  assert.equal(new URL(phone.url()).pathname, '/dashboard')
  await phone.getByRole('button', { name: 'Open navigation' }).click()
  await phone.getByRole('dialog', { name: 'Navigation' }).getByRole('link', { name: 'Projects' }).click()
  await phone.waitForURL(`${baseURL}/login`)
  await phone.getByRole('heading', { level: 1, name: 'Welcome back' }).waitFor()
  assert.equal(await tokenOf(phone), null, 'the phone forgot its token')

  // Sign in again on the laptop, then Sign out: the old token answers 401.
  const again = await signIn(laptop)
  assert.equal((await me(again)).status, 200)
  await laptop.getByRole('button', { name: 'Account menu' }).click()
  await laptop.getByRole('menuitem', { name: 'Sign out' }).click()
  await laptop.waitForURL(`${baseURL}/`)
  await laptop.getByText('Logged out successfully').waitFor()
  assert.equal(await tokenOf(laptop), null)
  const after = await me(again)
  assert.equal(after.status, 401, 'the signed-out token')
  assert.equal(after.json.message, 'Not authorized: please sign in')
}
