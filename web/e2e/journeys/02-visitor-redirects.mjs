// A logged-out visitor is sent away from logged-in-only screens.
import assert from 'node:assert/strict'

export const title = 'logged-out visitor opening /projects is sent to /'

export default async function visitorJourney({ newPage, baseURL }) {
  const page = await newPage()

  await page.goto('/projects')
  await page.waitForURL(`${baseURL}/`)
  await page.getByRole('heading', { level: 1, name: /ship your projects/i }).waitFor()

  await page.goto('/no/such/page')
  await page.waitForURL(`${baseURL}/`)

  // /dashboard asks to log in instead.
  await page.goto('/dashboard')
  await page.getByRole('link', { name: 'Go to Login' }).click()
  await page.waitForURL(`${baseURL}/login`)

  // /discover is open to visitors.
  await page.goto('/discover')
  await page.locator('h1').first().waitFor()
  await page.getByRole('banner').getByRole('link', { name: 'Get Started' }).waitFor()
  assert.equal(new URL(page.url()).pathname, '/discover')

  // A bad stored token is dropped silently.
  await page.evaluate(() => localStorage.setItem('token', 'not-a-real-token'))
  await page.goto('/profile')
  await page.waitForURL(`${baseURL}/`)
  assert.equal(await page.evaluate(() => localStorage.getItem('token')), null)
}
