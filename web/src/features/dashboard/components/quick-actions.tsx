import { Link } from 'react-router'
import { ArrowRight, Compass, FolderGit2, Plus, Rocket, type LucideIcon } from 'lucide-react'
import { paths } from '@/config/paths'

const actions: Array<{ to: string; icon: LucideIcon; title: string; text: string }> = [
  { to: paths.newProject.getHref(), icon: Plus, title: 'New Project', text: 'Import a repository and deploy it.' },
  { to: paths.projects.getHref(), icon: FolderGit2, title: 'My Projects', text: 'Build settings and status.' },
  { to: paths.deployments.getHref(), icon: Rocket, title: 'Deployments', text: 'Live apps, builds and logs.' },
  { to: paths.discover.getHref(), icon: Compass, title: 'Discover', text: 'See what others have shipped.' },
]

/** The four quick-action cards of SPEC §2. */
export function QuickActions() {
  return (
    <section aria-labelledby="quick-actions" className="mb-8">
      <h2 id="quick-actions" className="sr-only">
        Quick actions
      </h2>
      <ul className="grid grid-cols-2 gap-3 sm:gap-4 lg:grid-cols-4">
        {actions.map(({ to, icon: Icon, title, text }) => (
          <li key={to}>
            <Link
              to={to}
              className="group block h-full rounded-xl border border-zinc-200 bg-white p-4 transition-colors hover:border-indigo-300 hover:bg-indigo-50/40 sm:p-5 dark:border-zinc-800 dark:bg-zinc-900 dark:hover:border-indigo-500/40 dark:hover:bg-indigo-500/5"
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
              <p className="mt-1 hidden text-sm text-zinc-600 sm:block dark:text-zinc-400">{text}</p>
            </Link>
          </li>
        ))}
      </ul>
    </section>
  )
}
