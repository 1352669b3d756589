#!/usr/bin/env node
// Screenshots of every screen, light and dark, desktop (1280×800) and phone
// (375×812), into e2e/screenshots/<screen>-<theme>-<device>.png.
//
// run.mjs calls takeScreenshots at the end. On its own:
//   GANTRY_BIN=/abs/bin/gantry node e2e/screens.mjs     (starts the binary)
//   E2E_BASE_URL=http://localhost:5173 node e2e/screens.mjs   (a running app)
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  SCREENSHOT_DIR,
  launchBrowser,
  registerViaAPI,
  startServer,
  uniqueUser,
} from './lib/harness.mjs'
import { DISCOVER_SCREENS } from './lib/discover-screens.mjs'
import { DOMAIN_SCREENS, stopDomainScreens } from './lib/domain-screens.mjs'
import { NOTIFICATION_SCREENS } from './lib/notification-screens.mjs'
import { PROJECT_SCREENS } from './lib/project-screens.mjs'
// Issue 14's screens with made-up answers until the server has them (delete with the file).
import { PUSH_TO_DEPLOY_SCREENS } from './lib/push-to-deploy-screens.mjs'

const DEVICES = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 375, height: 812 },
}
const THEMES = ['light', 'dark']

const h1 = (name) => (page) => page.getByRole('heading', { level: 1, name }).first().waitFor()
// Screens built in their own feature folders change their headings (e.g. a
// not-found state for the made-up ids used here): wait for the content area
// and its first heading, whatever its level.
const anyH1 = async (page) => {
  await page.locator('main').first().waitFor()
  await page.locator('main :is(h1, h2, h3)').first().waitFor()
}

// A connected GitHub account for the GitHub screens: the signed-in user's
// real answer with this `github` patched in (the server under test has no
// OAuth app; the real flow is covered by the Go tests against a fake GitHub).
const GITHUB_REPOS = [
  ['portfolio', 'My personal portfolio: projects, CV and contact page', false, 'main', 2],
  ['thesis-dashboard', 'Charts for my thesis experiments (private until submission)', true, 'main', 5],
  ['recipe-finder', 'Search recipes by what is left in the fridge', false, 'develop', 12],
  ['club-website', '', true, 'main', 40],
  ['advent-of-code-2025-solutions-in-rust', 'Solutions, one folder per day', false, 'main', 90],
].map(([name, description, isPrivate, defaultBranch, days], i) => ({
  id: 81_920_431 + i,
  name,
  fullName: `maya-chen/${name}`,
  description,
  private: isPrivate,
  defaultBranch,
  updatedAt: new Date(Date.UTC(2026, 2, 1) - days * 86_400_000).toISOString(),
  url: `https://github.com/maya-chen/${name}`,
}))

async function withGitHubAccount(page) {
  await page.route('**/api/auth/me', async (route) => {
    const response = await route.fetch()
    const json = await response.json()
    json.data.user.github = { connected: true, username: 'maya-chen', avatar: '', repos: GITHUB_REPOS }
    await route.fulfill({ response, json })
  })
  await page.reload()
  await page.getByText('@maya-chen').waitFor()
}

// Storage usage for the profile and the sidebar's plan card: the signed-in
// user's real statistics with this `storage` patched in (filling 1 GB for
// real would take a thousand builds).
const MiB = 2 ** 20
function withStorage(storage) {
  return async (page) => {
    await page.route('**/api/users/stats', async (route) => {
      const response = await route.fetch()
      const json = await response.json()
      json.data.stats.storage = storage
      await route.fulfill({ response, json })
    })
    const answered = page.waitForResponse((r) => r.url().endsWith('/api/users/stats'))
    await page.reload()
    await answered
  }
}
const STORAGE_SOME = {
  used: 382 * MiB, budget: 1024 * MiB, files: 368 * MiB, logs: 14 * MiB,
  sites: 2 * MiB, apps: 241 * MiB, rollbacks: 125 * MiB,
}
// Live deployments alone fill it: deploys are refused.
const STORAGE_FULL = {
  used: 1044 * MiB, budget: 1024 * MiB, files: 1020 * MiB, logs: 24 * MiB,
  sites: 279 * MiB, apps: 741 * MiB, rollbacks: 0,
}
// Issue 32's lock-out: one Next.js app and its rollback; a deploy makes room.
const STORAGE_ROLLBACKS = {
  used: 1385 * MiB, budget: 1024 * MiB, files: 1383 * MiB, logs: 2 * MiB,
  sites: 0, apps: 741 * MiB, rollbacks: 642 * MiB,
}

/**
 * The screens. `auth` screens are taken signed in. `ready` waits for the
 * content; `act` puts the screen in the state to show; `only` limits it to
 * one device; `full` (default true) captures the whole page; `element`
 * (page → locator) captures just that part of it.
 */
export const SCREENS = [
  { name: 'landing', path: '/', ready: h1(/ship your projects/i) },
  {
    name: 'landing-menu',
    path: '/',
    only: 'phone',
    full: false,
    ready: h1(/ship your projects/i),
    act: (page) => page.getByRole('button', { name: 'Open menu' }).click(),
  },
  { name: 'login', path: '/login', ready: h1('Welcome back') },
  { name: 'register', path: '/register', ready: h1('Create your account') },
  {
    name: 'register-errors',
    path: '/register',
    ready: h1('Create your account'),
    act: async (page) => {
      await page.getByLabel('Username').fill('ab')
      await page.getByLabel('Email address').fill('not-an-email')
      await page.getByRole('button', { name: 'Create account' }).click()
      await page.getByText('Full name is required').waitFor()
    },
  },
  { name: 'dashboard-visitor', path: '/dashboard', ready: h1('Sign in to see your dashboard') },
  {
    name: 'github-callback-error',
    path: '/github-callback?error=access_denied',
    full: false,
    ready: (page) => page.getByText('GitHub authentication failed. Please try again.').waitFor(),
  },
  {
    // A private repository's preview sent a signed-out browser here.
    name: 'preview-access-signin',
    path: '/preview-access?host=portfolio--pr-12.localhost%3A8080&to=%2F',
    ready: h1('Sign in to open this preview'),
  },
  {
    // Signed in, but not the preview's owner (no such preview here).
    name: 'preview-access-refused',
    path: '/preview-access?host=portfolio--pr-12.localhost%3A8080&to=%2F',
    auth: true,
    full: false,
    ready: (page) => page.getByText('This preview cannot be opened').waitFor(),
  },
  {
    // The sign-in finished by the session that started it: here the server
    // refuses it (no OAuth app on the screens' server) and says why.
    name: 'github-callback-refused',
    path: '/github-callback?code=x&state=y',
    auth: true,
    full: false,
    ready: (page) => page.getByText('GitHub authentication failed. Please try again.').waitFor(),
  },

  { name: 'dashboard', path: '/dashboard', auth: true, ready: anyH1 },
  {
    name: 'user-menu',
    path: '/dashboard',
    auth: true,
    full: false,
    ready: anyH1,
    act: (page) => page.getByRole('button', { name: 'Account menu' }).click(),
  },
  {
    name: 'sidebar-drawer',
    path: '/projects',
    auth: true,
    only: 'phone',
    full: false,
    ready: anyH1,
    act: (page) => page.getByRole('button', { name: 'Open navigation' }).click(),
  },
  ...PROJECT_SCREENS,
  ...PUSH_TO_DEPLOY_SCREENS,
  ...DOMAIN_SCREENS,
  ...DISCOVER_SCREENS,
  {
    name: 'profile',
    path: '/profile',
    auth: true,
    ready: async (page) => {
      await h1('Profile')(page)
      await page.getByText('Account Age').waitFor()
    },
  },
  {
    // The confirmation only: confirming would end the session every
    // signed-in screen here uses.
    name: 'profile-sign-out-everywhere',
    path: '/profile',
    auth: true,
    full: false,
    ready: h1('Profile'),
    act: async (page) => {
      await page.getByRole('button', { name: 'Sign out everywhere' }).click()
      await page.getByRole('dialog', { name: 'Sign out everywhere?' }).waitFor()
    },
  },
  {
    name: 'profile-storage',
    path: '/profile',
    auth: true,
    ready: h1('Profile'),
    act: async (page) => {
      await withStorage(STORAGE_SOME)(page)
      await page.getByTestId('storage-total').waitFor()
    },
  },
  {
    name: 'profile-storage-full',
    path: '/profile',
    auth: true,
    ready: h1('Profile'),
    act: async (page) => {
      await withStorage(STORAGE_FULL)(page)
      await page.getByText('Your storage is full', { exact: false }).waitFor()
    },
  },
  {
    name: 'profile-storage-rollbacks',
    path: '/profile',
    auth: true,
    ready: h1('Profile'),
    act: async (page) => {
      await withStorage(STORAGE_ROLLBACKS)(page)
      await page.getByText('Your next deploy first removes', { exact: false }).waitFor()
    },
  },
  {
    name: 'sidebar-drawer-storage',
    path: '/projects',
    auth: true,
    only: 'phone',
    full: false,
    ready: anyH1,
    act: async (page) => {
      await withStorage(STORAGE_SOME)(page)
      await page.getByRole('button', { name: 'Open navigation' }).click()
      await page.getByRole('dialog').getByTestId('plan-storage').waitFor()
    },
  },
  { name: 'settings', path: '/settings', auth: true, ready: h1('Settings') },
  { name: 'github-integration', path: '/github-integration', auth: true, ready: anyH1 },
  {
    name: 'github-integration-not-configured',
    path: '/github-integration',
    auth: true,
    ready: anyH1,
    act: async (page) => {
      await page.route('**/api/auth/github/url', (route) =>
        route.fulfill({
          status: 503,
          json: {
            success: false,
            message: 'GitHub is not configured on this server: set GANTRY_GITHUB_CLIENT_ID and GANTRY_GITHUB_CLIENT_SECRET',
          },
        }),
      )
      await page.getByRole('button', { name: 'Connect GitHub' }).click()
      await page.getByRole('alert').waitFor()
    },
  },
  { name: 'github-integration-connected', path: '/github-integration', auth: true, ready: anyH1, act: withGitHubAccount },
  {
    name: 'github-integration-modal',
    path: '/github-integration',
    auth: true,
    full: false,
    ready: anyH1,
    act: async (page) => {
      await withGitHubAccount(page)
      await page.getByRole('button', { name: /thesis-dashboard/ }).click()
      await page.getByRole('dialog').waitFor()
    },
  },
  { name: 'notifications', path: '/notifications', auth: true, ready: anyH1 },
  ...NOTIFICATION_SCREENS,
]

/**
 * takeScreenshots writes every screen × theme × device and returns how many
 * files it wrote. `apiURL` is where to register the signed-in user.
 */
export async function takeScreenshots({ browser, baseURL, apiURL, filter = '' }) {
  // A full run starts from an empty folder; a filtered one replaces only its files.
  if (!filter) await rm(SCREENSHOT_DIR, { recursive: true, force: true })
  await mkdir(SCREENSHOT_DIR, { recursive: true })
  const token = await registerViaAPI(apiURL, {
    ...uniqueUser('maya'),
    fullName: 'Maya Chen',
  })

  let count = 0
  for (const [device, viewport] of Object.entries(DEVICES)) {
    for (const theme of THEMES) {
      for (const screen of SCREENS) {
        if (screen.only && screen.only !== device) continue
        if (filter && !screen.name.includes(filter)) continue
        const context = await browser.newContext({
          viewport,
          baseURL,
          reducedMotion: 'reduce',
          colorScheme: theme,
        })
        try {
          await context.addInitScript(
            ([t, tok]) => {
              localStorage.setItem('theme', t)
              if (tok) localStorage.setItem('token', tok)
              else localStorage.removeItem('token')
            },
            [theme, screen.auth ? token : null],
          )
          const page = await context.newPage()
          page.setDefaultTimeout(10_000)
          await page.goto(screen.path)
          await screen.ready(page)
          await page.waitForLoadState('networkidle', { timeout: 3000 }).catch(() => {})
          if (screen.act) await screen.act(page)
          await page.waitForTimeout(150)
          const file = path.join(SCREENSHOT_DIR, `${screen.name}-${theme}-${device}.png`)
          if (screen.element) await screen.element(page).screenshot({ path: file })
          else await page.screenshot({ path: file, fullPage: screen.full !== false })
          count += 1
        } catch (err) {
          throw new Error(`screen ${screen.name} (${theme}, ${device}): ${err.message}`, { cause: err })
        } finally {
          await context.close()
        }
      }
    }
  }
  await stopDomainScreens()
  return count
}

async function standalone() {
  const filter = process.argv[2] ?? ''
  let server
  let baseURL = process.env.E2E_BASE_URL
  let apiURL = baseURL
  if (!baseURL) {
    server = await startServer(process.env.GANTRY_BIN)
    baseURL = server.baseURL
    apiURL = server.apiURL
  }
  const browser = await launchBrowser()
  try {
    const count = await takeScreenshots({ browser, baseURL, apiURL, filter })
    console.log(`${count} screenshots in ${path.relative(process.cwd(), SCREENSHOT_DIR)}`)
  } finally {
    await browser.close()
    await server?.stop()
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  standalone().catch((err) => {
    console.error(err)
    process.exit(1)
  })
}
