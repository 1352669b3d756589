// A real git host on loopback for the deploy journeys: bare repositories
// made with the git CLI under a temporary folder, served over smart HTTP by
// internal/gittest/gitserve (built once into the same folder). The gantry
// server must allow 127.0.0.1 (GANTRY_GIT_ALLOW_HOSTS, set by the harness).
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { E2E_DIR } from './harness.mjs'

const run = promisify(execFile)
const REPO_ROOT = path.resolve(E2E_DIR, '..', '..')

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Ada Lovelace',
  GIT_AUTHOR_EMAIL: 'ada@example.com',
  GIT_COMMITTER_NAME: 'Ada Lovelace',
  GIT_COMMITTER_EMAIL: 'ada@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
}

const git = (args, cwd) => run('git', args, { cwd, env: GIT_ENV })

/**
 * startGitHost builds gitserve, starts it on 127.0.0.1:<free port> over a
 * fresh folder and answers {url, root, addRepo, stop}. stop() kills it and
 * removes the folder; it is safe to call more than once.
 */
export async function startGitHost() {
  {
    const root = await mkdtemp(path.join(os.tmpdir(), 'gantry-e2e-git-'))
    const bin = path.join(root, 'gitserve')
    await run('go', ['build', '-o', bin, './internal/gittest/gitserve'], { cwd: REPO_ROOT, env: process.env })
    const repos = path.join(root, 'repos')
    await mkdir(repos)
    const child = spawn(bin, ['-root', repos], { stdio: ['ignore', 'pipe', 'inherit'] })
    const url = await new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout })
      const timer = setTimeout(() => reject(new Error('gitserve did not start within 10 s')), 10_000)
      child.once('exit', (code) => reject(new Error(`gitserve exited with ${code}`)))
      lines.once('line', (line) => {
        clearTimeout(timer)
        const m = /^listening on (http:\/\/\S+)$/.exec(line.trim())
        if (m) resolve(m[1])
        else reject(new Error(`gitserve said: ${line}`))
      })
    })
    let stopped = false
    const stop = async () => {
      if (stopped) return
      stopped = true
      child.kill('SIGTERM')
      await rm(root, { recursive: true, force: true })
    }
    process.once('exit', () => {
      if (!stopped) child.kill('SIGKILL')
    })

    /**
     * addRepo creates ROOT/<owner>/<name>.git holding one commit of `files`
     * ({path: content}) on main and answers its clone URL.
     */
    const addRepo = async (fullName, files, message = 'Initial commit') => {
      const bare = path.join(repos, `${fullName}.git`)
      await mkdir(path.dirname(bare), { recursive: true })
      await git(['init', '--quiet', '--bare', '--initial-branch=main', bare])
      const work = await mkdtemp(path.join(root, 'work-'))
      await git(['init', '--quiet', '--initial-branch=main', work])
      for (const [file, content] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(work, file)), { recursive: true })
        await writeFile(path.join(work, file), content)
      }
      await git(['add', '-A'], work)
      await git(['commit', '--quiet', '-m', message], work)
      await git(['push', '--quiet', bare, 'main'], work)
      await rm(work, { recursive: true, force: true })
      return `${url}/${fullName}.git`
    }
    return { url, root, addRepo, stop }
  }
}

/** A one-page static site whose page shows `marker`. */
export function staticSite(marker, title = 'E2E Site') {
  return {
    'index.html': `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${title}</h1><p id="marker">${marker}</p></body>
</html>
`,
  }
}
