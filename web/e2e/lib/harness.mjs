// Shared plumbing of the browser tests: start the real gantry binary on a
// free port with a fresh data folder, wait for it, and launch Debian's
// Chromium through playwright-core.
import { execFileSync, spawn } from 'node:child_process'
import { createWriteStream, readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

export const E2E_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
export const OUT_DIR = path.join(E2E_DIR, '.out')
export const SCREENSHOT_DIR = path.join(E2E_DIR, 'screenshots')

// unmountUnder unmounts the filesystems mounted below dir: each build
// workspace is a volume of its own (a loop-mounted image), and live apps'
// volumes stay mounted when the server stops, for its next start.
export function unmountUnder(dir) {
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p) => p && p.startsWith(dir + '/'))
    .reverse()
  for (const p of points) {
    try {
      execFileSync('umount', ['-l', p])
    } catch {
      // already gone
    }
  }
}

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

/** A TCP port nothing listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/**
 * startServer runs `$bin serve` on 127.0.0.1:<free port> with a fresh data
 * folder. Its output goes to e2e/.out/server.log. stop() kills it and removes
 * the folder; it is safe to call more than once.
 */
export async function startServer(bin, { timeoutMs = 30_000 } = {}) {
  if (!bin) throw new Error('GANTRY_BIN is not set: point it at the gantry binary (make build makes bin/gantry)')
  const port = await freePort()
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gantry-e2e-'))
  // The sandboxed build user must be able to pass through the data folder.
  await chmod(dataDir, 0o711)
  await mkdir(OUT_DIR, { recursive: true })
  const logPath = path.join(OUT_DIR, 'server.log')
  const log = createWriteStream(logPath)
  const env = {
    ...process.env,
    GANTRY_ADDR: `127.0.0.1:${port}`,
    GANTRY_DATA_DIR: dataDir,
    GANTRY_PUBLIC_URL: `http://localhost:${port}`,
    // registerViaAPI gives each API sign-up an address of its own.
    GANTRY_TRUST_PROXY: 'true',
    // The deploy journeys clone from a git host on loopback (e2e/lib/githost.mjs).
    GANTRY_GIT_ALLOW_HOSTS: process.env.GANTRY_GIT_ALLOW_HOSTS ?? '127.0.0.1',
    // Server apps sleep after 10 s without a request and a browser gets the
    // "Waking up…" page after 1 s (journeys/08-sleeping.mjs), not 15 min and 3 s.
    GANTRY_APP_IDLE: process.env.GANTRY_APP_IDLE ?? '10s',
    GANTRY_WAKE_PAGE_AFTER: process.env.GANTRY_WAKE_PAGE_AFTER ?? '1s',
  }
  const child = spawn(bin, ['serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout.pipe(log)
  child.stderr.pipe(log)
  let exited = null
  const exitedPromise = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exited = { code, signal }
      resolve(exited)
    })
    child.on('error', (err) => {
      exited = { code: null, signal: null, error: err }
      resolve(exited)
    })
  })

  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    if (!exited) {
      child.kill('SIGTERM')
      const done = await Promise.race([exitedPromise, sleep(5000).then(() => null)])
      if (!done) {
        child.kill('SIGKILL')
        await exitedPromise
      }
    }
    log.end()
    unmountUnder(dataDir)
    await rm(dataDir, { recursive: true, force: true })
  }

  const apiURL = `http://127.0.0.1:${port}`
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (exited) {
      await stop()
      throw new Error(`gantry serve exited early (${JSON.stringify(exited)}); see ${logPath}`)
    }
    try {
      const res = await fetch(`${apiURL}/api/health`)
      if (res.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`gantry serve did not answer /api/health within ${timeoutMs} ms; see ${logPath}`)
    }
    await sleep(100)
  }

  return { baseURL: `http://localhost:${port}`, apiURL, port, dataDir, logPath, stop }
}

export function launchBrowser() {
  return chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS })
}

/** Calls the API directly from Node, for setting up a journey. */
export async function apiCall(apiURL, method, pathname, body, token, extraHeaders = {}) {
  const headers = { Accept: 'application/json', ...extraHeaders }
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  if (token) headers.Authorization = `Bearer ${token}`
  const res = await fetch(`${apiURL}${pathname}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = await res.json().catch(() => null)
  return { status: res.status, json }
}

let counter = 0
/** Credentials nobody has used on this server yet. */
export function uniqueUser(prefix = 'e2e') {
  counter += 1
  const id = `${prefix}${Date.now().toString(36)}${counter}`
  return {
    fullName: 'Ada Lovelace',
    username: id,
    email: `${id}@example.com`,
    password: 'correct-horse-42',
  }
}

let registrations = 0
/**
 * Registers a user through the API and returns its token. Each comes from an
 * address of its own (X-Forwarded-For, which the server trusts here), as
 * students' sign-ups do: one address may register only 10 accounts in
 * 15 minutes, fewer than a run's journeys and screenshots make.
 */
export async function registerViaAPI(apiURL, user) {
  registrations += 1
  const from = `10.77.${(registrations >> 8) & 255}.${registrations & 255}`
  const { status, json } = await apiCall(apiURL, 'POST', '/api/auth/register', user, undefined, { 'X-Forwarded-For': from })
  if (status < 200 || status >= 300 || !json?.data?.token) {
    throw new Error(`register via API: status ${status}: ${JSON.stringify(json)}`)
  }
  return json.data.token
}
