#!/usr/bin/env node
// Browser journeys against the real binary:
//   cd web && GANTRY_BIN=/abs/bin/gantry node e2e/run.mjs [filter]
// Starts `gantry serve` on a free port with a fresh data folder, runs every
// journey in e2e/journeys/*.mjs (each exports a default async function taking
// the context below, and optionally a `title`), then takes the screenshots of
// e2e/screens.mjs (skip them with E2E_SCREENS=0). Prints "N passed, M failed"
// last and exits 1 when anything failed. The server and its data folder are
// always removed.
import { readdir, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { E2E_DIR, OUT_DIR, launchBrowser, registerViaAPI, startServer, uniqueUser } from './lib/harness.mjs'
import { takeScreenshots } from './screens.mjs'

const filter = process.argv[2] ?? ''

function slug(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
}

/** The context every journey receives. Pages it opens are closed afterwards. */
function journeyContext(server, browser) {
  const contexts = []
  const pageErrors = []
  return {
    baseURL: server.baseURL,
    apiURL: server.apiURL,
    browser,
    uniqueUser,
    registerViaAPI: (user) => registerViaAPI(server.apiURL, user),
    /**
     * newPage opens a page in a fresh browser context (own storage).
     * Options: viewport, theme ('light' | 'dark'), token (signed in).
     */
    async newPage({ viewport = { width: 1280, height: 800 }, theme, token } = {}) {
      const context = await browser.newContext({ viewport, baseURL: server.baseURL })
      contexts.push(context)
      if (theme || token) {
        await context.addInitScript(
          ([t, tok]) => {
            if (t) localStorage.setItem('theme', t)
            if (tok && !sessionStorage.getItem('e2e-token-set')) {
              localStorage.setItem('token', tok)
              sessionStorage.setItem('e2e-token-set', '1')
            }
          },
          [theme ?? null, token ?? null],
        )
      }
      const page = await context.newPage()
      page.setDefaultTimeout(10_000)
      page.on('pageerror', (err) => pageErrors.push(err))
      return page
    },
    async close(failureName) {
      if (failureName) {
        let i = 0
        for (const context of contexts) {
          for (const page of context.pages()) {
            i += 1
            await page
              .screenshot({ path: path.join(OUT_DIR, `${slug(failureName)}-failure-${i}.png`), fullPage: true })
              .catch(() => {})
          }
        }
      }
      await Promise.all(contexts.map((c) => c.close().catch(() => {})))
      if (pageErrors.length > 0 && !failureName) {
        throw new Error(`uncaught error in the page: ${pageErrors.map((e) => e.message).join('; ')}`)
      }
    },
  }
}

async function loadJourneys() {
  const dir = path.join(E2E_DIR, 'journeys')
  const files = (await readdir(dir)).filter((f) => f.endsWith('.mjs')).sort()
  const journeys = []
  for (const file of files) {
    const mod = await import(pathToFileURL(path.join(dir, file)).href)
    if (typeof mod.default !== 'function') throw new Error(`${file} must export a default async function`)
    journeys.push({ title: mod.title ?? file.replace(/\.mjs$/, ''), run: mod.default })
  }
  return journeys.filter((j) => j.title.toLowerCase().includes(filter.toLowerCase()))
}

async function main() {
  await mkdir(OUT_DIR, { recursive: true })
  const journeys = await loadJourneys()
  let passed = 0
  let failed = 0
  let server
  let browser
  const stopAll = async () => {
    await browser?.close().catch(() => {})
    await server?.stop().catch(() => {})
  }
  const onSignal = (signal) => {
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)

  try {
    server = await startServer(process.env.GANTRY_BIN)
    console.log(`gantry serve is up at ${server.baseURL} (log: ${path.relative(process.cwd(), server.logPath)})`)
    browser = await launchBrowser()

    for (const journey of journeys) {
      const ctx = journeyContext(server, browser)
      const started = Date.now()
      try {
        await journey.run(ctx)
        await ctx.close()
        passed += 1
        console.log(`  ✓ ${journey.title} (${Date.now() - started} ms)`)
      } catch (err) {
        await ctx.close(journey.title).catch(() => {})
        failed += 1
        console.log(`  ✗ ${journey.title}`)
        console.log(indent(err?.stack ?? String(err)))
      }
    }

    if (process.env.E2E_SCREENS !== '0' && !filter) {
      const started = Date.now()
      try {
        const count = await takeScreenshots({ browser, baseURL: server.baseURL, apiURL: server.apiURL })
        passed += 1
        console.log(`  ✓ screenshots: ${count} files in e2e/screenshots (${Date.now() - started} ms)`)
      } catch (err) {
        failed += 1
        console.log('  ✗ screenshots')
        console.log(indent(err?.stack ?? String(err)))
      }
    }
  } catch (err) {
    failed += 1
    console.log(`  ✗ setup: ${err?.message ?? err}`)
  } finally {
    await stopAll()
  }

  console.log(`${passed} passed, ${failed} failed`)
  process.exit(failed > 0 ? 1 : 0)
}

function indent(text) {
  return String(text)
    .split('\n')
    .map((l) => `      ${l}`)
    .join('\n')
}

await main()
