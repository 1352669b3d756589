import { CalendarDays, FolderGit2, Rocket, Zap, type LucideIcon } from 'lucide-react'
import { Skeleton } from '@/components/ui/skeleton'
import type { DashboardStats } from '../types'

type Stat = {
  label: string
  icon: LucideIcon
  tone: string
  value: (s: DashboardStats) => number
  note: (s: DashboardStats) => string
}

const STATS: Stat[] = [
  {
    label: 'Total Projects',
    icon: FolderGit2,
    tone: 'bg-violet-50 text-violet-600 dark:bg-violet-500/15 dark:text-violet-300',
    value: (s) => s.totalProjects,
    note: () => 'Repositories you deploy',
  },
  {
    label: 'Active Deployments',
    icon: Zap,
    tone: 'bg-emerald-50 text-emerald-600 dark:bg-emerald-500/15 dark:text-emerald-300',
    value: (s) => s.activeDeployments,
    note: () => 'Live right now',
  },
  {
    label: 'Total Deployments',
    icon: Rocket,
    tone: 'bg-indigo-50 text-indigo-600 dark:bg-indigo-500/15 dark:text-indigo-300',
    value: (s) => s.totalDeployments,
    note: (s) => (s.failedDeployments === 0 ? 'None failed' : `${s.failedDeployments} failed`),
  },
  {
    label: 'This Month',
    icon: CalendarDays,
    tone: 'bg-amber-50 text-amber-700 dark:bg-amber-500/15 dark:text-amber-300',
    value: (s) => s.thisMonth,
    note: () => 'Deployments since the 1st',
  },
]

/** The four stat cards; skeletons while loading, dashes when they failed. */
export function StatCards({ stats, loading }: { stats?: DashboardStats; loading: boolean }) {
  return (
    <section aria-labelledby="stats-title" className="mb-8">
      <h2 id="stats-title" className="sr-only">
        Statistics
      </h2>
      <dl className="grid grid-cols-2 gap-3 sm:gap-4 lg:grid-cols-4">
        {STATS.map((stat) => {
          const Icon = stat.icon
          return (
            <div
              key={stat.label}
              className="rounded-xl border border-zinc-200 bg-white p-4 shadow-xs sm:p-5 dark:border-zinc-800 dark:bg-zinc-900"
            >
              <dt className="flex items-center justify-between gap-2 text-sm font-medium text-zinc-600 dark:text-zinc-400">
                <span className="min-w-0">{stat.label}</span>
                <span className={`flex size-8 shrink-0 items-center justify-center rounded-lg ${stat.tone}`}>
                  <Icon className="size-4" aria-hidden="true" />
                </span>
              </dt>
              <dd className="mt-2">
                {stats ? (
                  <>
                    <span className="block text-3xl font-semibold tabular-nums tracking-tight text-zinc-900 dark:text-zinc-50">
                      {stat.value(stats)}
                    </span>
                    <span className="mt-1 block text-xs text-zinc-500 dark:text-zinc-400">{stat.note(stats)}</span>
                  </>
                ) : loading ? (
                  <>
                    <Skeleton className="h-9 w-12" />
                    <Skeleton className="mt-2 h-3 w-24" />
                  </>
                ) : (
                  <span className="block text-3xl font-semibold text-zinc-400 dark:text-zinc-600">—</span>
                )}
              </dd>
            </div>
          )
        })}
      </dl>
    </section>
  )
}
