import { CalendarClock, GitBranch } from 'lucide-react'
import type { GitHubRepo } from '@/types/api'
import { formatDate } from '@/utils/format'
import { RepoPrivacy } from './repo-privacy'

/** One repository in the grid; choosing it opens its details. */
export function RepoCard({ repo, onSelect }: { repo: GitHubRepo; onSelect: (repo: GitHubRepo) => void }) {
  const updated = formatDate(repo.updatedAt)
  return (
    <button
      type="button"
      onClick={() => onSelect(repo)}
      aria-label={`${repo.fullName}, ${repo.private ? 'private' : 'public'}: show details`}
      className="group flex h-full w-full min-w-0 flex-col rounded-xl border border-zinc-200 bg-white p-4 text-left shadow-xs transition-colors hover:border-indigo-300 hover:bg-zinc-50/60 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500 dark:border-zinc-800 dark:bg-zinc-900 dark:hover:border-indigo-500/50 dark:hover:bg-zinc-800/40"
    >
      <div className="flex w-full items-start justify-between gap-3">
        <div className="min-w-0">
          <p title={repo.name} className="truncate font-semibold text-zinc-900 group-hover:text-indigo-700 dark:text-zinc-50 dark:group-hover:text-indigo-300">
            {repo.name}
          </p>
          <p title={repo.fullName} className="truncate font-mono text-xs text-zinc-500 dark:text-zinc-400">{repo.fullName}</p>
        </div>
        <RepoPrivacy isPrivate={repo.private} />
      </div>
      <p className="mt-3 line-clamp-2 min-h-10 text-sm text-zinc-600 dark:text-zinc-400">
        {repo.description || <span className="italic text-zinc-500 dark:text-zinc-500">No description</span>}
      </p>
      <div className="mt-4 flex w-full flex-wrap items-center gap-x-4 gap-y-1 text-xs text-zinc-500 dark:text-zinc-400">
        <span className="inline-flex min-w-0 items-center gap-1.5">
          <GitBranch className="size-3.5 shrink-0" aria-hidden="true" />
          <span className="sr-only">Branch</span>
          <span className="truncate font-mono">{repo.defaultBranch || 'main'}</span>
        </span>
        {updated ? (
          <span className="inline-flex items-center gap-1.5">
            <CalendarClock className="size-3.5 shrink-0" aria-hidden="true" />
            Updated {updated}
          </span>
        ) : null}
      </div>
    </button>
  )
}
