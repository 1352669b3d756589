// Shapes of the projects API (SPEC §3 Project, docs: internal/api/projects.go).

/** deployed, building, failed or draft; anything else is shown raw. */
export type ProjectStatus = 'deployed' | 'building' | 'failed' | 'draft' | (string & {})

export type Commit = {
  message: string
  author: string
  date: string
  sha: string
}

export type Repository = {
  id: string
  name: string
  fullName: string
  description?: string
  defaultBranch: string
  private: boolean
  url: string
  cloneUrl?: string
  lastCommit?: Commit | null
}

export type BuildConfig = {
  installCommand: string
  buildCommand: string
  outputDirectory: string
  /** Only for server apps. */
  startCommand?: string
  /** A Node server app keeps its devDependencies (pruned after the build otherwise). */
  keepDevDependencies?: boolean
}

export type ActiveDeployment = { _id?: string; subdomain: string; url?: string }

/** One of a project's deployments, newest first. */
export type ProjectDeployment = {
  _id: string
  version: string
  subdomain: string
  url: string
  status: string
  createdAt: string
}

export type Project = {
  _id: string
  name: string
  description: string
  status: ProjectStatus
  /** The SPEC §3 type: react, vue, static… */
  type: string
  repository: Repository
  branch: string
  subdomain?: string
  buildConfig: BuildConfig
  /** Whether the live app is listed in Discover; off by default for private repositories. */
  showInDiscover?: boolean
  /** Keeps its server app running however long it goes unused (paid plans). */
  alwaysOn?: boolean
  /** Its live server app sleeps until its next visit. */
  sleeping?: boolean
  activeDeployment: ActiveDeployment | null
  deployments?: ProjectDeployment[]
  /** Pushes, the deploy hook and the commit watcher start deployments (on by default). */
  autoDeploy?: boolean
  /** Polls a public repository outside GitHub for new commits on the branch. */
  watchCommits?: boolean
  /** POSTing to it starts a deployment; shown to the owner only. */
  deployHookUrl?: string
  createdAt?: string
  updatedAt?: string
}

/** The answer of POST /api/projects/public-repo. */
export type RepoLookup = {
  repository: Repository
  /** The branch to deploy: the URL's /tree/<branch>, else the default branch. */
  branch?: string
  suggestedName: string
  suggestedDescription: string
  buildConfig: BuildConfig
  /** The detected SPEC §3 type; empty when detection failed. */
  framework?: string
  detectError?: string
}

/** Which deployments get a variable. */
export type EnvScope = 'all' | 'production' | 'preview'

/** One environment variable of a project; a secret's value is always masked. */
export type EnvVar = {
  key: string
  value: string
  isSecret: boolean
  /** all when missing. */
  scope?: EnvScope
}

/** The last delivery GitHub made to the project's webhook. */
export type WebhookDelivery = {
  at: string
  event: string
  action?: string
  result: 'ok' | 'ignored' | 'failed' | (string & {})
  message?: string
}

export type WebhookStatus = {
  active: boolean
  error: string | null
  lastDelivery: WebhookDelivery | null
}

export type PullRequestState = 'awaiting_approval' | 'approved' | 'open' | 'closed'

export type PullRequest = {
  number: number
  title: string
  author: string
  headBranch: string
  fork: boolean
  state: PullRequestState | (string & {})
  url: string
  /** The head commit Gantry last saw: Approve builds exactly this one. */
  headSha: string
  /** The pull request's changes on GitHub. */
  diffUrl: string
  deploymentId: string | null
}

/** GET /api/projects/{id}/github: the webhook and pull requests of a GitHub project. */
export type ProjectGitHub = {
  webhook: WebhookStatus | null
  pullRequests: PullRequest[]
  /** Names of the variables a fork's pull request is built with (scope preview only). */
  forkVariables: string[]
}
