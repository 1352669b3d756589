import { Link } from 'react-router'
import { ArrowRight, BarChart3, Compass, FolderGit2, LogIn, Plus, Rocket, type LucideIcon } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { ComingNext } from '@/components/ui/coming-next'
import { PageHeader } from '@/components/ui/page-header'
import { paths } from '@/config/paths'
import { useAuth } from '@/lib/auth'

const quickActions: Array<{ to: string; icon: LucideIcon; title: string; text: string }> = [
  { to: paths.newProject.getHref(), icon: Plus, title: 'New Project', text: 'Import a repository and deploy it.' },
  { to: paths.projects.getHref(), icon: FolderGit2, title: 'My Projects', text: 'Build settings and status.' },
  { to: paths.deployments.getHref(), icon: Rocket, title: 'Deployments', text: 'Live apps, builds and logs.' },
  { to: paths.discover.getHref(), icon: Compass, title: 'Discover', text: 'See what others have shipped.' },
]

/** The dashboard of a signed-in user (SPEC §2). */
export function DashboardRoute() {
  const { user } = useAuth()
  const firstName = (user?.fullName || user?.username || '').split(' ')[0]
  return (
    <>
      <PageHeader title="Dashboard" description="Your projects and deployments at a glance." />
      <section
        aria-label="Welcome"
        className="relative mb-8 overflow-hidden rounded-xl border border-indigo-200 bg-gradient-to-br from-indigo-50 to-white p-6 sm:p-8 dark:border-indigo-500/20 dark:from-indigo-500/10 dark:to-zinc-900"
      >
        <h2 className="text-xl font-semibold text-zinc-900 dark:text-zinc-50">Welcome back, {firstName}!</h2>
        <p className="mt-1 max-w-xl text-sm text-zinc-600 dark:text-zinc-400">
          Pick up where you left off, or import a repository and have it live in minutes.
        </p>
      </section>

      <h2 className="sr-only">Quick actions</h2>
      <ul className="mb-8 grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
        {quickActions.map(({ to, icon: Icon, title, text }) => (
          <li key={to}>
            <Link
              to={to}
              className="group block h-full rounded-xl border border-zinc-200 bg-white p-5 transition-colors hover:border-indigo-300 hover:bg-indigo-50/40 dark:border-zinc-800 dark:bg-zinc-900 dark:hover:border-indigo-500/40 dark:hover:bg-indigo-500/5"
            >
              <div className="flex items-center justify-between">
                <span className="flex size-9 items-center justify-center rounded-lg bg-zinc-100 text-zinc-700 group-hover:bg-indigo-100 group-hover:text-indigo-700 dark:bg-zinc-800 dark:text-zinc-300 dark:group-hover:bg-indigo-500/20 dark:group-hover:text-indigo-300">
                  <Icon className="size-4.5" aria-hidden="true" />
                </span>
                <ArrowRight
                  className="size-4 text-zinc-300 transition-transform group-hover:translate-x-0.5 group-hover:text-indigo-500 dark:text-zinc-600"
                  aria-hidden="true"
                />
              </div>
              <p className="mt-4 font-medium text-zinc-900 dark:text-zinc-50">{title}</p>
              <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{text}</p>
            </Link>
          </li>
        ))}
      </ul>

      <ComingNext
        icon={BarChart3}
        description="Your stats, recent projects and deployments, and a getting-started guide will appear here."
        action={
          <Link to={paths.newProject.getHref()} className={buttonClasses({ variant: 'secondary' })}>
            Create a project
          </Link>
        }
      />
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
