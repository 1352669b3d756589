#!/usr/bin/env node
// The HTTPS and custom domain journey in real Chromium against the real
// binary with GANTRY_TLS=acme and a real ACME CA on loopback (pebble, with
// pebble-challtestsrv answering DNS: internal/acmedns/acmednstest/pebbleserve),
// which the usual runner does not start:
//
//   cd web && GANTRY_BIN=/abs/bin/gantry node e2e/https-journey.mjs
//
// It builds and starts pebbleserve (or runs PEBBLESERVE_BIN), then `gantry
// serve` with the environment pebbleserve prints (GANTRY_DNS_RESOLVER is
// challtestsrv, where the journey creates the custom domain's records).
// Chromium trusts pebble's root for real, not by ignoring certificate
// errors: it runs with HOME at a temporary folder whose ~/.pki/nssdb (made
// with certutil from libnss3-tools) holds that root as a trusted CA, and
// --host-resolver-rules maps the test names to 127.0.0.1.
//
// Journey: a static site is deployed (through the API), the user adds
// www.maya-portfolio.com on the project page's Domains card (Waiting for
// DNS), the records appear at challtestsrv, Check now → Verified, the site
// opens at https://www.maya-portfolio.com:<port>/ (its certificate issued
// on demand at that first handshake, for exactly that name) and the card
// turns to Certificate issued by itself. Screenshots of the card in both
// real states (light/dark, desktop/phone) land in e2e/screenshots/ as
// https-domains-<waiting|issued>-<theme>-<device>.png. Prints "ok" and
// exits 0, or the failure and exits 1.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import https from 'node:https'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import tls from 'node:tls'
import { promisify } from 'node:util'
import { chromium } from 'playwright-core'
import { CHROMIUM_ARGS, E2E_DIR, OUT_DIR, SCREENSHOT_DIR, freePort, uniqueUser } from './lib/harness.mjs'
import { startGitHost, staticSite } from './lib/githost.mjs'

const REPO_ROOT = path.resolve(E2E_DIR, '..', '..')
const PUBLIC_HOST = 'gantry.test'
const DOMAIN = 'www.maya-portfolio.com'
const MARKER = 'served over HTTPS on my own domain'
const run = promisify(execFile)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const cleanups = []

/** Builds pebbleserve into the temporary folder, unless PEBBLESERVE_BIN names one. */
async function pebbleserveBinary(tmp) {
  if (process.env.PEBBLESERVE_BIN) return process.env.PEBBLESERVE_BIN
  const bin = path.join(tmp, 'pebbleserve')
  await run('go', ['build', '-o', bin, './internal/acmedns/acmednstest/pebbleserve'], { cwd: REPO_ROOT })
  return bin
}

/** Starts pebbleserve; answers the environment it prints and challtestsrv's management URL. */
async function startCA(tmp, httpPort) {
  const rootFile = path.join(tmp, 'pebble-root.pem')
  // pebbleserve finds pebble's module with `go list -m`: run it in the repository.
  const child = spawn(await pebbleserveBinary(tmp), ['-http-port', String(httpPort), '-zone', 'apps.test', '-root', rootFile], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  cleanups.push(() => child.kill('SIGTERM'))
  const env = {}
  let mgmt
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('pebbleserve did not start within 5 min')), 300_000)
    child.once('exit', (code) => reject(new Error(`pebbleserve exited with ${code}`)))
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('GANTRY_')) {
        for (const pair of line.trim().split(/\s+/)) {
          const i = pair.indexOf('=')
          env[pair.slice(0, i)] = pair.slice(i + 1)
        }
      }
      const m = /^challtestsrv (http:\/\/\S+)$/.exec(line.trim())
      if (m) {
        mgmt = m[1]
        clearTimeout(timer)
        resolve()
      }
    })
  })
  assert.ok(env.GANTRY_DNS_RESOLVER, 'pebbleserve printed no GANTRY_DNS_RESOLVER')
  return { env, mgmt, root: await readFile(rootFile) }
}

/** Sets a record at challtestsrv (/set-txt, /set-cname). */
async function setRecord(mgmt, kind, body) {
  const res = await fetch(`${mgmt}/${kind}`, { method: 'POST', body: JSON.stringify(body) })
  assert.equal(res.status, 200, `challtestsrv ${kind}: ${res.status} ${await res.text()}`)
}

/** One HTTPS request from Node to host on 127.0.0.1, trusting only pebble's root. */
function httpsCall({ host, port, root, method = 'GET', pathname = '/', body, token }) {
  return new Promise((resolve, reject) => {
    const headers = { Host: `${host}:${port}`, Accept: 'application/json' }
    if (body !== undefined) headers['Content-Type'] = 'application/json'
    if (token) headers.Authorization = `Bearer ${token}`
    const req = https.request({ host: '127.0.0.1', port, servername: host, ca: root, method, path: pathname, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c) => (text += c))
      res.on('end', () => {
        let json = null
        try {
          json = JSON.parse(text)
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode, json, text })
      })
    })
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} https://${host}${pathname}: timed out`)))
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

/** The subjectAltName of the certificate served for name on 127.0.0.1:port. */
function certificateNames(port, name, root) {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port, servername: name, ca: root }, () => {
      resolve(sock.getPeerCertificate().subjectaltname)
      sock.end()
    })
    sock.on('error', reject)
  })
}

/** Starts `gantry serve` with HTTPS by ACME; resolves once the public host answers over HTTPS. */
async function startGantry(tmp, ca, httpPort, httpsPort) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gantry-e2e-https-'))
  await chmod(dataDir, 0o711) // the sandboxed build user passes through it
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
  await mkdir(OUT_DIR, { recursive: true })
  const logPath = path.join(OUT_DIR, 'https-server.log')
  const log = createWriteStream(logPath)
  const child = spawn(process.env.GANTRY_BIN, ['serve'], {
    env: {
      ...process.env,
      ...ca.env,
      GANTRY_ADDR: `127.0.0.1:${httpPort}`,
      GANTRY_HTTPS_ADDR: `127.0.0.1:${httpsPort}`,
      GANTRY_PUBLIC_URL: `https://${PUBLIC_HOST}:${httpsPort}`,
      GANTRY_LIVE_DOMAIN: 'apps.test',
      GANTRY_PUBLIC_IPV4: '127.0.0.1',
      GANTRY_DATA_DIR: dataDir,
      GANTRY_GIT_ALLOW_HOSTS: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout.pipe(log)
  child.stderr.pipe(log)
  let exited = false
  child.once('exit', () => (exited = true))
  cleanups.unshift(async () => {
    if (!exited) {
      child.kill('SIGTERM')
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(5000)])
    }
  })
  const deadline = Date.now() + 120_000
  for (;;) {
    assert.ok(!exited, `gantry serve exited; see ${logPath}`)
    const res = await httpsCall({ host: PUBLIC_HOST, port: httpsPort, root: ca.root, pathname: '/api/health' }).catch(() => null)
    if (res?.status === 200) return logPath
    assert.ok(Date.now() < deadline, `https://${PUBLIC_HOST}/api/health did not answer within 120 s; see ${logPath}`)
    await sleep(250)
  }
}

/** Makes a throwaway NSS database under home trusting root as a CA, as Chromium on Linux reads it. */
async function trustRoot(home, rootFile) {
  const db = path.join(home, '.pki', 'nssdb')
  await mkdir(db, { recursive: true })
  await run('certutil', ['-d', `sql:${db}`, '-N', '--empty-password'])
  await run('certutil', ['-d', `sql:${db}`, '-A', '-t', 'C,,', '-n', 'pebble e2e root', '-i', rootFile])
}

const DEVICES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } }

/** Screenshots of the Domains card as it is now, light and dark, desktop and phone. */
async function screenshotCard(browser, baseURL, token, projectId, state, label) {
  await mkdir(SCREENSHOT_DIR, { recursive: true })
  for (const [device, viewport] of Object.entries(DEVICES)) {
    for (const theme of ['light', 'dark']) {
      const context = await browser.newContext({ viewport, baseURL, reducedMotion: 'reduce', colorScheme: theme })
      try {
        await context.addInitScript(
          ([t, tok]) => {
            localStorage.setItem('theme', t)
            localStorage.setItem('token', tok)
          },
          [theme, token],
        )
        const page = await context.newPage()
        await page.goto(`/projects/${projectId}`)
        const list = page.getByRole('list', { name: 'Custom domains' })
        await list.getByText(label, { exact: true }).waitFor({ timeout: 15_000 })
        await page.getByRole('heading', { name: 'Domains' }).evaluate((el) => {
          el.style.scrollMarginTop = '88px' // below the sticky top bar
          el.scrollIntoView({ block: 'start' })
        })
        await page.waitForTimeout(200)
        await page.screenshot({ path: path.join(SCREENSHOT_DIR, `https-domains-${state}-${theme}-${device}.png`) })
      } finally {
        await context.close()
      }
    }
  }
}

async function journey() {
  assert.ok(process.env.GANTRY_BIN, 'GANTRY_BIN is not set: point it at the gantry binary (make build makes bin/gantry)')
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'gantry-e2e-https-tmp-'))
  cleanups.push(() => rm(tmp, { recursive: true, force: true }))
  const httpPort = await freePort()
  const httpsPort = await freePort()
  const ca = await startCA(tmp, httpPort)
  const logPath = await startGantry(tmp, ca, httpPort, httpsPort)
  const api = (method, pathname, body, token) =>
    httpsCall({ host: PUBLIC_HOST, port: httpsPort, root: ca.root, method, pathname, body, token })

  // A live static site, set up through the API.
  const gitHost = await startGitHost()
  cleanups.unshift(() => gitHost.stop())
  const url = await gitHost.addRepo('maya-chen/portfolio', staticSite(MARKER, 'Maya Chen'))
  const reg = await api('POST', '/api/auth/register', { ...uniqueUser('https'), fullName: 'Maya Chen' })
  assert.equal(reg.status, 201, `register: ${reg.text}`)
  const token = reg.json.data.token
  const created = await api('POST', '/api/projects/public', { repository: { url }, name: 'Maya Portfolio', buildConfig: { outputDirectory: '.' } }, token)
  assert.equal(created.status, 201, `create project: ${created.text}`)
  const project = created.json.data.project
  const dep = await api('POST', '/api/deployments', { projectId: project._id }, token)
  assert.equal(dep.status, 201, `deploy: ${dep.text}`)
  for (let status = '', deadline = Date.now() + 120_000; status !== 'live'; await sleep(300)) {
    const res = await api('GET', `/api/deployments/${dep.json.data.deployment._id}`, undefined, token)
    status = res.json?.data?.deployment?.status
    assert.ok(status !== 'failed' && Date.now() < deadline, `deployment: ${status}; see ${logPath}`)
  }

  // Chromium trusting pebble's root through its NSS database.
  const home = path.join(tmp, 'home')
  await trustRoot(home, path.join(tmp, 'pebble-root.pem'))
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP *.test 127.0.0.1, MAP ${DOMAIN} 127.0.0.1`],
    env: { ...process.env, HOME: home },
  })
  cleanups.unshift(() => browser.close())
  const baseURL = `https://${PUBLIC_HOST}:${httpsPort}`
  const context = await browser.newContext({ viewport: DEVICES.desktop, baseURL })
  await context.addInitScript((tok) => localStorage.setItem('token', tok), token)
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const errors = []
  page.on('pageerror', (err) => errors.push(err))

  // Add the domain on the Domains card: Waiting for DNS, with its records.
  await page.goto(`/projects/${project._id}`)
  await page.getByRole('heading', { name: 'Domains' }).waitFor()
  await page.getByLabel('Add a domain').fill(DOMAIN)
  await page.getByRole('button', { name: 'Add', exact: true }).click()
  const list = page.getByRole('list', { name: 'Custom domains' })
  const item = list.getByRole('listitem').filter({ hasText: DOMAIN })
  await item.getByText('Waiting for DNS', { exact: true }).waitFor()
  const shown = await api('GET', `/api/projects/${project._id}/domains`, undefined, token)
  const domain = shown.json.data.domains.find((d) => d.name === DOMAIN)
  const txt = domain.records.find((r) => r.type === 'TXT')
  const cname = domain.records.find((r) => r.type === 'CNAME')
  assert.ok(txt && cname, `records: ${JSON.stringify(domain.records)}`)
  await item.getByText(txt.value).first().waitFor() // the card shows what to copy
  await screenshotCard(browser, baseURL, token, project._id, 'waiting', 'Waiting for DNS')

  // The records appear at the DNS provider; Check now verifies them.
  await setRecord(ca.mgmt, 'set-txt', { host: `${txt.name}.`, value: txt.value })
  await setRecord(ca.mgmt, 'set-cname', { host: `${cname.name}.`, target: `${cname.value}.` })
  await item.getByRole('button', { name: 'Check now' }).click()
  await item.getByText('Verified', { exact: true }).waitFor()

  // The first HTTPS visit on the name gets its certificate on demand; the
  // page loads only if Chromium trusts it.
  const site = await context.newPage()
  const res = await site.goto(`https://${DOMAIN}:${httpsPort}/`, { timeout: 90_000 })
  assert.equal(res.status(), 200)
  await site.getByText(MARKER).waitFor()
  const security = await res.securityDetails()
  assert.match(security?.issuer ?? '', /Pebble/i, `issuer: ${security?.issuer}`)
  // Pebble's certificates name their host in the SAN only: read it from Node.
  assert.equal(await certificateNames(httpsPort, DOMAIN, ca.root), `DNS:${DOMAIN}`)
  await site.close()

  // The card turns to Certificate issued by itself (it polls while Verified).
  await item.getByText('Certificate issued', { exact: true }).waitFor({ timeout: 30_000 })
  await screenshotCard(browser, baseURL, token, project._id, 'issued', 'Certificate issued')
  assert.deepEqual(errors, [], `page errors: ${errors.join('; ')}`)
}

let code = 0
try {
  await journey()
  console.log('ok')
} catch (err) {
  console.error(err)
  code = 1
} finally {
  for (const c of cleanups) await Promise.resolve().then(c).catch(() => {})
}
process.exit(code)
