// Registration errors show under their fields, client-side and from the server.
import assert from 'node:assert/strict'

export const title = 'registration errors show under their fields'

/** The validation message attached to a field, and whether it sits below it. */
async function messageUnder(page, locator) {
  return locator.evaluate((input) => {
    const id = input.getAttribute('aria-describedby')
    const message = id ? document.getElementById(id) : null
    if (!message) return { text: null, below: false }
    const a = input.getBoundingClientRect()
    const b = message.getBoundingClientRect()
    return { text: message.textContent, below: b.top >= a.bottom - 1 && b.left < a.right }
  })
}

export default async function registrationErrorsJourney({ newPage, uniqueUser, registerViaAPI }) {
  const page = await newPage({ viewport: { width: 375, height: 812 } })
  await page.goto('/register')

  const fields = {
    fullName: page.getByLabel('Full name'),
    username: page.getByLabel('Username'),
    email: page.getByLabel('Email address'),
    password: page.getByLabel('Password', { exact: true }),
    confirm: page.getByLabel('Confirm password'),
    terms: page.getByRole('checkbox', { name: /i agree to the terms/i }),
  }
  const submit = page.getByRole('button', { name: 'Create account' })

  await submit.click()
  const required = {
    fullName: 'Full name is required',
    username: 'Username is required',
    email: 'Email is required',
    password: 'Password is required',
    confirm: 'Please confirm your password',
    terms: 'You must accept the terms and privacy policy',
  }
  for (const [key, text] of Object.entries(required)) {
    const got = await messageUnder(page, fields[key])
    assert.equal(got.text, text, `${key} message`)
    assert.ok(got.below, `${key} message sits under its field`)
  }

  // Rule by rule.
  await fields.fullName.fill('Ada Lovelace')
  await fields.username.fill('ab')
  await fields.email.fill('ada@nowhere')
  await fields.password.fill('12345')
  await fields.confirm.fill('123456')
  await submit.click()
  assert.equal((await messageUnder(page, fields.fullName)).text, null)
  assert.equal((await messageUnder(page, fields.username)).text, 'Username must be at least 3 characters long')
  assert.equal((await messageUnder(page, fields.email)).text, 'Please enter a valid email address')
  assert.equal((await messageUnder(page, fields.password)).text, 'Password must be at least 6 characters long')
  assert.equal((await messageUnder(page, fields.confirm)).text, 'Passwords do not match')

  await fields.username.fill('ada lovelace!')
  assert.equal((await messageUnder(page, fields.username)).text, null, 'editing clears the error')
  await submit.click()
  assert.equal(
    (await messageUnder(page, fields.username)).text,
    'Username can only contain letters, numbers, underscores, and hyphens',
  )

  // The server refuses a taken email with its own message, as a toast.
  const taken = uniqueUser('taken')
  await registerViaAPI(taken)
  const fresh = uniqueUser('fresh')
  await fields.username.fill(fresh.username)
  await fields.email.fill(taken.email)
  await fields.password.fill(fresh.password)
  await fields.confirm.fill(fresh.password)
  await fields.terms.check()
  await submit.click()
  const toast = page.locator('[role="status"]').filter({ hasText: /./ }).first()
  await toast.waitFor()
  const text = (await toast.innerText()).trim()
  assert.ok(text.length > 0 && !/^Registration failed$/.test(text), `server message shown, got "${text}"`)
  assert.equal(new URL(page.url()).pathname, '/register')
  await submit.waitFor({ state: 'visible' })
  assert.equal(await submit.isEnabled(), true)
}
