// Shapes of the deployments API (SPEC §3 Deployment, internal/api/deployments.go).

export type DeploymentStatus = 'pending' | 'building' | 'deploying' | 'live' | 'failed' | 'stopped'

export type BuildInfo = {
  startTime?: string | null
  endTime?: string | null
  /** Milliseconds. */
  duration?: number
  /** Bytes. */
  buildSize?: number
  buildCommand?: string
  outputDirectory?: string
  installCommand?: string
  startCommand?: string
  framework?: string
}

/** What started a deployment (SPEC §3 `metadata.trigger`, "manual" when missing). */
export type DeploymentTrigger = 'manual' | 'push' | 'hook' | 'pull_request' | 'redeploy' | 'rollback'

/** Where a deployment is served: the project's own address, or a preview address of its own. */
export type DeploymentTarget = 'production' | 'preview'

export type DeploymentMetadata = {
  commitHash?: string
  commitMessage?: string
  branch?: string
  author?: string
  trigger?: DeploymentTrigger | (string & {})
  /** The pull request a preview was built for. */
  pullRequest?: number
  repository?: { fullName?: string }
}

export type BuildLog = { seq?: number; level: string; type?: string; timestamp: string; message: string }

export type EnvVariable = { key: string; value: string; isSecret: boolean }

export type DeploymentProject = {
  _id?: string
  name: string
  description?: string
  type?: string
  buildConfig?: {
    installCommand?: string
    buildCommand?: string
    outputDirectory?: string
    startCommand?: string
  }
  repository?: { fullName?: string; url?: string; name?: string }
}

export type Deployment = {
  _id: string
  version?: string
  subdomain: string
  url?: string
  status: DeploymentStatus | (string & {})
  /** A live server app asleep after going unused: still live, woken by its next visit. */
  sleeping?: boolean
  /** Why a failed deployment failed. */
  error?: string
  createdAt: string
  updatedAt?: string
  views?: number
  likeCount?: number
  project?: DeploymentProject | null
  user?: { _id: string; fullName: string; username: string }
  buildInfo?: BuildInfo
  metadata?: DeploymentMetadata
  buildLogs?: BuildLog[]
  environment?: { variables?: EnvVariable[] }
  /** Bytes its kept files take on disk (0 once removed). */
  filesSize?: number
  /** Bytes of its log messages. */
  logSize?: number
  /** When its files were removed to save space; it can no longer be restarted. */
  prunedAt?: string | null
  /** production (the default) or preview. */
  target?: DeploymentTarget | (string & {})
  /** When this earlier deployment was promoted back to production (a rollback). */
  promotedAt?: string | null
  /** Why it failed: the known cause it matched, and the seqs of the log lines that show it. */
  diagnosis?: Diagnosis | null
}

/** "Why it failed" (docs/api.md): what went wrong, what to do, the log lines that gave it away. */
export type Diagnosis = {
  title: string
  detail: string
  /** Seqs of the log entries to highlight. */
  lines: number[]
}
