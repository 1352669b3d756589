// Shapes of the API's answers (SPEC §3). Only what the web app reads.

export type Role = 'student' | 'hobbyist' | 'developer' | 'admin'
export type Plan = 'free' | 'basic' | 'pro' | 'enterprise'

export type Subscription = {
  plan?: string
  maxProjects?: number
  maxDeployments?: number
  /** The storage budget in bytes. */
  maxStorage?: number
}

export type GitHubRepo = {
  id: number
  name: string
  fullName: string
  description?: string
  private: boolean
  defaultBranch: string
  updatedAt: string
  url: string
}

export type GitHubLink = {
  connected: boolean
  username?: string
  avatar?: string
  repos?: GitHubRepo[]
}

export type User = {
  _id: string
  fullName: string
  username: string
  email: string
  avatar?: string
  /** student, hobbyist, developer or admin; anything else is shown as student. */
  role?: string
  subscription?: Subscription
  isVerified?: boolean
  isActive?: boolean
  createdAt?: string
  lastLogin?: string | null
  github?: GitHubLink
}

/** What an account's deployments keep on disk, in bytes (used = files + logs; build caches are the platform's, not counted). */
export type StorageUsage = {
  used: number
  budget: number
  files: number
  logs: number
  /** the server apps' data folders (/data), as last measured */
  data?: number
  /** `files` split: live (and building) static sites, */
  sites?: number
  /** live, sleeping (and building) server apps' workspaces, */
  apps?: number
  /** and stopped or failed deployments kept for rollback (a deploy into a full budget removes them first). */
  rollbacks?: number
}

export type UserStats = {
  totalProjects: number
  totalDeployments: number
  activeDeployments: number
  accountAge: number
  storage?: StorageUsage
}

export type AuthResult = { user: User; token: string }

/** A public deployment as the landing page and Discover read it. */
export type PublicDeployment = {
  _id: string
  url: string
  createdAt: string
  project: { name: string; description?: string; type?: string }
  user: { fullName: string; username: string }
  views?: number
  likeCount?: number
  /** A server app asleep after going unused; its card sends a wake hint when seen. */
  sleeping?: boolean
}

export type Notification = {
  _id: string
  type: string
  title: string
  message: string
  read: boolean
  createdAt: string
  actionUrl?: string
}
