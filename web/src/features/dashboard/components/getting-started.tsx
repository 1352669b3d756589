import { Link } from 'react-router'
import { Check } from 'lucide-react'
import { paths } from '@/config/paths'
import { cn } from '@/lib/cn'
import type { DashboardStats } from '../types'

type Step = { title: string; text: string; to: string; action: string; done: boolean }

/**
 * The three steps from nothing to a live app; each is ticked once done
 * (as far as the dashboard's numbers tell).
 */
export function GettingStarted({ githubConnected, stats }: { githubConnected: boolean; stats?: DashboardStats }) {
  const steps: Step[] = [
    {
      title: 'Connect your code',
      text: 'Connect GitHub to pick from your repositories, or use the URL of any public repository.',
      to: paths.githubIntegration.getHref(),
      action: githubConnected ? 'GitHub connected' : 'Connect GitHub',
      done: githubConnected || (stats?.totalProjects ?? 0) > 0,
    },
    {
      title: 'Create a project',
      text: 'Choose a repository and check its branch and build settings.',
      to: paths.newProject.getHref(),
      action: 'New project',
      done: (stats?.totalProjects ?? 0) > 0,
    },
    {
      title: 'Deploy and share',
      text: 'Each deployment is built in a sandbox and served on its own subdomain.',
      to: paths.deployments.getHref(),
      action: 'See deployments',
      done: (stats?.activeDeployments ?? 0) > 0,
    },
  ]
  const done = steps.filter((s) => s.done).length
  return (
    <section
      aria-labelledby="getting-started"
      className="mt-8 rounded-xl border border-zinc-200 bg-white p-5 shadow-xs sm:p-6 dark:border-zinc-800 dark:bg-zinc-900"
    >
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 id="getting-started" className="text-base font-semibold text-zinc-900 dark:text-zinc-50">
          Getting Started
        </h2>
        {stats ? (
          <p className="text-sm text-zinc-500 dark:text-zinc-400">
            {done} of {steps.length} done
          </p>
        ) : null}
      </div>
      <ol className="mt-5 grid gap-4 md:grid-cols-3">
        {steps.map((step, i) => (
          <li
            key={step.title}
            className={cn(
              'flex gap-3 rounded-lg border p-4',
              step.done
                ? 'border-emerald-200 bg-emerald-50/50 dark:border-emerald-500/20 dark:bg-emerald-500/5'
                : 'border-zinc-200 dark:border-zinc-800',
            )}
          >
            <span
              className={cn(
                'flex size-7 shrink-0 items-center justify-center rounded-full text-sm font-semibold',
                step.done
                  ? 'bg-emerald-600 text-white dark:bg-emerald-500 dark:text-zinc-950'
                  : 'bg-indigo-50 text-indigo-700 dark:bg-indigo-500/15 dark:text-indigo-300',
              )}
            >
              {step.done ? (
                <>
                  <Check className="size-4" aria-hidden="true" />
                  <span className="sr-only">Done:</span>
                </>
              ) : (
                i + 1
              )}
            </span>
            <div className="min-w-0">
              <h3 className="text-sm font-medium text-zinc-900 dark:text-zinc-50">{step.title}</h3>
              <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{step.text}</p>
              <Link
                to={step.to}
                className="mt-2 inline-block rounded text-sm font-medium text-indigo-600 hover:underline dark:text-indigo-300"
              >
                {step.action} →
              </Link>
            </div>
          </li>
        ))}
      </ol>
    </section>
  )
}
