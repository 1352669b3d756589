import { CalendarDays, FolderGit2, Rocket, Zap, type LucideIcon } from 'lucide-react'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { Skeleton } from '@/components/ui/skeleton'
import type { UserStats } from '@/types/api'
import { useUserStats } from '../api/get-user-stats'

type Stat = { label: string; icon: LucideIcon; value: (s: UserStats) => number; unit?: (n: number) => string }

const stats: Stat[] = [
  { label: 'Total Projects', icon: FolderGit2, value: (s) => s.totalProjects },
  { label: 'Total Deployments', icon: Rocket, value: (s) => s.totalDeployments },
  { label: 'Active Deployments', icon: Zap, value: (s) => s.activeDeployments },
  {
    label: 'Account Age',
    icon: CalendarDays,
    value: (s) => s.accountAge,
    unit: (n) => (n === 1 ? 'day' : 'days'),
  },
]

/** The user's numbers from /api/users/stats (SPEC §2 Profile). */
export function StatsCard() {
  const query = useUserStats()
  return (
    <Card>
      <CardHeader className="flex-row items-center justify-between">
        <CardTitle>Statistics</CardTitle>
        {query.isError ? (
          <Button variant="ghost" size="sm" onClick={() => void query.refetch()}>
            Try again
          </Button>
        ) : null}
      </CardHeader>
      <CardContent>
        {query.isError ? (
          <p className="mb-4 text-sm text-zinc-600 dark:text-zinc-400">Statistics could not be loaded.</p>
        ) : null}
        <dl className="grid grid-cols-2 gap-3">
          {stats.map((stat) => {
            const Icon = stat.icon
            return (
              <div
                key={stat.label}
                className="rounded-lg border border-zinc-200 bg-zinc-50/60 p-4 dark:border-zinc-800 dark:bg-zinc-950/40"
              >
                <dt className="flex items-center gap-2 text-xs font-medium text-zinc-600 dark:text-zinc-400">
                  <Icon className="size-4 text-zinc-400 dark:text-zinc-500" aria-hidden="true" />
                  {stat.label}
                </dt>
                <dd className="mt-2 text-2xl font-semibold tabular-nums text-zinc-900 dark:text-zinc-50">
                  {query.data ? (
                    <>
                      {stat.value(query.data)}
                      {stat.unit ? (
                        <span className="ml-1.5 text-sm font-medium text-zinc-500 dark:text-zinc-400">
                          {stat.unit(stat.value(query.data))}
                        </span>
                      ) : null}
                    </>
                  ) : query.isPending ? (
                    <Skeleton className="h-8 w-12" />
                  ) : (
                    '—'
                  )}
                </dd>
              </div>
            )
          })}
        </dl>
      </CardContent>
    </Card>
  )
}
