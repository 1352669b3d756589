import { useMemo, useState } from 'react'
import { GitBranch, Search, SearchX } from 'lucide-react'
import { Button } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { Input } from '@/components/ui/input'
import { cn } from '@/lib/cn'
import type { GitHubRepo } from '@/types/api'
import { formatDate } from '@/utils/format'

/** Repositories whose name, description or full name contain the search. */
export function searchRepos(repos: GitHubRepo[], search: string): GitHubRepo[] {
  const q = search.trim().toLowerCase()
  if (!q) return repos
  return repos.filter((r) =>
    [r.name, r.description ?? '', r.fullName].some((text) => text.toLowerCase().includes(q)),
  )
}

type GitHubRepoPickerProps = {
  repos: GitHubRepo[]
  onSelect: (repo: GitHubRepo) => void
}

/** The connected account's repositories with a search (SPEC §2 New project). */
export function GitHubRepoPicker({ repos, onSelect }: GitHubRepoPickerProps) {
  const [search, setSearch] = useState('')
  const shown = useMemo(() => searchRepos(repos, search), [repos, search])
  return (
    <div>
      <div className="mb-4 flex flex-col gap-2 sm:flex-row sm:items-end sm:justify-between">
        <Input
          label="Search repositories"
          type="search"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
          placeholder="Name, description or owner/name"
          className="sm:w-80"
          trailing={<Search className="mr-2 size-4 text-zinc-400" aria-hidden="true" />}
        />
        <p className="text-sm text-zinc-600 dark:text-zinc-400" aria-live="polite">
          {shown.length} of {repos.length} repositories
        </p>
      </div>
      {shown.length === 0 ? (
        <EmptyState
          icon={SearchX}
          title="No repositories found"
          description={search ? 'Nothing matches this search.' : 'Your GitHub account has no repositories yet.'}
          action={
            search ? (
              <Button variant="secondary" onClick={() => setSearch('')}>
                Clear search
              </Button>
            ) : undefined
          }
        />
      ) : (
        <ul className="grid gap-3 sm:grid-cols-2">
          {shown.map((repo) => (
            <li key={repo.id}>
              <button
                type="button"
                onClick={() => onSelect(repo)}
                className="flex h-full w-full flex-col rounded-xl border border-zinc-200 bg-white p-4 text-left transition-colors hover:border-indigo-300 hover:bg-indigo-50/40 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:border-zinc-800 dark:bg-zinc-900 dark:hover:border-indigo-500/40 dark:hover:bg-indigo-500/5"
              >
                <span className="flex items-center gap-2">
                  <span
                    className={cn('size-2 shrink-0 rounded-full', repo.private ? 'bg-amber-500' : 'bg-emerald-500')}
                    aria-hidden="true"
                  />
                  <span className="truncate font-medium text-zinc-900 dark:text-zinc-50">{repo.name}</span>
                  <span className="ml-auto text-xs text-zinc-500">{repo.private ? 'Private' : 'Public'}</span>
                </span>
                <span className="mt-1 truncate font-mono text-xs text-zinc-500 dark:text-zinc-400">{repo.fullName}</span>
                <span className="mt-2 line-clamp-2 text-sm text-zinc-600 dark:text-zinc-400">
                  {repo.description || 'No description'}
                </span>
                <span className="mt-3 flex items-center gap-3 text-xs text-zinc-500 dark:text-zinc-400">
                  <span className="inline-flex items-center gap-1 font-mono">
                    <GitBranch className="size-3.5" aria-hidden="true" />
                    {repo.defaultBranch}
                  </span>
                  {repo.updatedAt ? <span>Updated {formatDate(repo.updatedAt)}</span> : null}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
