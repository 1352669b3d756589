import { Link } from 'react-router'
import { Plus } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { paths } from '@/config/paths'
import type { DashboardStats } from '../types'

/** "Welcome back, Maya!" with one line about where things stand. */
export function WelcomeBanner({ name, stats }: { name: string; stats?: DashboardStats }) {
  return (
    <section
      aria-label="Welcome"
      className="mb-8 flex flex-col gap-5 overflow-hidden rounded-xl border border-indigo-200 bg-gradient-to-br from-indigo-50 to-white p-6 sm:flex-row sm:items-center sm:justify-between sm:p-8 dark:border-indigo-500/20 dark:from-indigo-500/10 dark:to-zinc-900"
    >
      <div className="min-w-0">
        <h2 className="text-xl font-semibold text-zinc-900 dark:text-zinc-50">Welcome back, {name}!</h2>
        <p className="mt-1 max-w-xl text-sm text-zinc-600 dark:text-zinc-400">{summary(stats)}</p>
      </div>
      <Link to={paths.newProject.getHref()} className={buttonClasses({ className: 'shrink-0 self-start sm:self-auto' })}>
        <Plus className="size-4" aria-hidden="true" />
        New Project
      </Link>
    </section>
  )
}

function summary(stats: DashboardStats | undefined): string {
  if (!stats || stats.totalProjects === 0) {
    return 'Import a repository and have it live on its own subdomain in minutes.'
  }
  const live = stats.activeDeployments
  const month = stats.thisMonth
  const liveText = live === 0 ? 'Nothing is live right now' : `${live} ${live === 1 ? 'app is' : 'apps are'} live`
  return `${liveText}, and you have deployed ${month} ${month === 1 ? 'time' : 'times'} this month.`
}
