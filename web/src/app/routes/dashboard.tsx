import { Link } from 'react-router'
import { AlertTriangle, LogIn } from 'lucide-react'
import { Button, buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'
import { DASHBOARD_LOAD_FAILED, useDashboard } from '@/features/dashboard/api/get-dashboard'
import { GettingStarted } from '@/features/dashboard/components/getting-started'
import { QuickActions } from '@/features/dashboard/components/quick-actions'
import { RecentDeployments } from '@/features/dashboard/components/recent-deployments'
import { RecentProjects } from '@/features/dashboard/components/recent-projects'
import { StatCards } from '@/features/dashboard/components/stat-cards'
import { WelcomeBanner } from '@/features/dashboard/components/welcome-banner'
import { DeploymentStatusBadge } from '@/features/deployments/components/deployment-status'
import { ProjectStatusBadge } from '@/features/projects/components/project-status-badge'
import { ProjectTypeIcon } from '@/features/projects/components/project-type-icon'
import { useAuth } from '@/lib/auth'

/** The dashboard of a signed-in user (SPEC §2), from GET /api/dashboard. */
export function DashboardRoute() {
  const { user } = useAuth()
  const dashboard = useDashboard()
  const firstName = (user?.fullName || user?.username || '').trim().split(/\s+/)[0]

  const data = dashboard.data
  const loading = dashboard.isPending
  return (
    <>
      <PageHeader title="Dashboard" description="Your projects and deployments at a glance." />
      <WelcomeBanner name={firstName} stats={data?.stats} />
      <QuickActions />

      {dashboard.isError && !data ? (
        <div
          role="alert"
          className="mb-8 flex flex-col items-start gap-3 rounded-xl border border-red-200 bg-red-50 p-5 sm:flex-row sm:items-center sm:justify-between dark:border-red-500/30 dark:bg-red-500/10"
        >
          <p className="flex items-center gap-2 text-sm font-medium text-red-800 dark:text-red-200">
            <AlertTriangle className="size-4 shrink-0" aria-hidden="true" />
            {DASHBOARD_LOAD_FAILED}
          </p>
          <Button variant="secondary" size="sm" onClick={() => void dashboard.refetch()} loading={dashboard.isFetching}>
            Try Again
          </Button>
        </div>
      ) : null}

      <StatCards stats={data?.stats} loading={loading} />

      <div className="grid gap-6 lg:grid-cols-2">
        <RecentProjects
          projects={data?.recentProjects}
          loading={loading}
          refreshing={dashboard.isFetching && !loading}
          onRefresh={() => void dashboard.refetch()}
          renderIcon={(type) => <ProjectTypeIcon type={type} />}
          renderStatus={(status, sleeping) => <ProjectStatusBadge status={status} sleeping={sleeping} />}
        />
        <RecentDeployments
          deployments={data?.recentDeployments}
          loading={loading}
          renderStatus={(status, sleeping) => <DeploymentStatusBadge status={status} sleeping={sleeping} />}
        />
      </div>

      <GettingStarted githubConnected={Boolean(user?.github?.connected)} stats={data?.stats} />
    </>
  )
}

/** What a visitor who opens /dashboard sees (SPEC §2, §6). */
export function DashboardLoginPrompt() {
  return (
    <div className="mx-auto flex max-w-md flex-col px-4 py-20">
      <title>Dashboard · Gantry</title>
      <Card className="p-8 text-center">
        <div className="mx-auto flex size-12 items-center justify-center rounded-full bg-indigo-50 text-indigo-600 dark:bg-indigo-500/15 dark:text-indigo-300">
          <LogIn className="size-6" aria-hidden="true" />
        </div>
        <h1 className="mt-4 text-xl font-semibold text-zinc-900 dark:text-zinc-50">Sign in to see your dashboard</h1>
        <p className="mt-2 text-sm text-zinc-600 dark:text-zinc-400">
          Your projects, deployments and stats live here once you are logged in.
        </p>
        <Link to={paths.login.getHref()} className={buttonClasses({ className: 'mt-6 w-full' })}>
          Go to Login
        </Link>
        <p className="mt-4 text-sm text-zinc-600 dark:text-zinc-400">
          No account yet?{' '}
          <Link
            to={paths.register.getHref()}
            className="rounded font-medium text-indigo-600 hover:underline dark:text-indigo-400"
          >
            Create one
          </Link>
        </p>
      </Card>
    </div>
  )
}
