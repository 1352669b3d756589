// GET /api/dashboard (SPEC §3 Dashboard data).

export type DashboardStats = {
  totalProjects: number
  activeDeployments: number
  totalDeployments: number
  failedDeployments: number
  /** Deployments created since the start of this month (UTC). */
  thisMonth: number
}

export type DashboardProject = {
  id: string
  name: string
  type: string
  status: string
  /** When its newest deployment was created; null when it never was. */
  lastDeployed: string | null
  /** Where it is live; null unless its subdomain serves a live deployment. */
  url: string | null
  /** Its live server app sleeps until its next visit. */
  sleeping?: boolean
}

export type DashboardDeployment = {
  id: string
  projectName: string
  subdomain: string
  status: string
  /** Build duration in milliseconds; null until the build ends. */
  buildTime: number | null
  deployedAt: string
  /** A live server app asleep until its next visit. */
  sleeping?: boolean
}

export type DashboardData = {
  stats: DashboardStats
  recentProjects: DashboardProject[]
  recentDeployments: DashboardDeployment[]
}
