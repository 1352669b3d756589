import { useMemo, useState } from 'react'
import { FolderGit2, Search, SearchX } from 'lucide-react'
import { Button } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { fieldClasses } from '@/components/ui/input'
import { cn } from '@/lib/cn'
import type { GitHubRepo } from '@/types/api'
import { RepoCard } from './repo-card'
import { RepoDetailDialog } from './repo-detail-dialog'

type RepoGridProps = {
  repos: GitHubRepo[]
  onRefresh: () => void
  refreshing: boolean
}

/** The connected account's repositories, searchable, each opening its details. */
export function RepoGrid({ repos, onRefresh, refreshing }: RepoGridProps) {
  const [query, setQuery] = useState('')
  const [selected, setSelected] = useState<GitHubRepo | null>(null)
  const shown = useMemo(() => {
    const q = query.trim().toLowerCase()
    if (!q) return repos
    return repos.filter((r) =>
      [r.name, r.fullName, r.description ?? ''].some((field) => field.toLowerCase().includes(q)),
    )
  }, [repos, query])

  if (repos.length === 0) {
    return (
      <EmptyState
        icon={FolderGit2}
        title="No repositories yet"
        description="Create a repository on GitHub, or grant Gantry access to one, then refresh."
        action={
          <Button variant="secondary" onClick={onRefresh} loading={refreshing}>
            Refresh Repositories
          </Button>
        }
      />
    )
  }

  return (
    <section aria-labelledby="repositories-heading">
      <div className="mb-4 flex flex-col gap-3 sm:flex-row sm:items-center sm:justify-between">
        <div>
          <h2 id="repositories-heading" className="text-base font-semibold text-zinc-900 dark:text-zinc-50">
            Repositories
          </h2>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            {shown.length === repos.length
              ? `${repos.length} ${repos.length === 1 ? 'repository' : 'repositories'}`
              : `${shown.length} of ${repos.length} repositories`}
          </p>
        </div>
        <div className="relative w-full sm:w-72">
          <Search
            className="pointer-events-none absolute top-1/2 left-3 size-4 -translate-y-1/2 text-zinc-500 dark:text-zinc-400"
            aria-hidden="true"
          />
          <input
            type="search"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            placeholder="Search repositories"
            aria-label="Search repositories"
            className={cn(fieldClasses, 'border-zinc-300 pl-9 dark:border-zinc-700')}
          />
        </div>
      </div>
      {shown.length === 0 ? (
        <EmptyState
          icon={SearchX}
          title="No repositories found"
          description={`Nothing matches "${query.trim()}".`}
          action={
            <Button variant="secondary" onClick={() => setQuery('')}>
              Clear search
            </Button>
          }
        />
      ) : (
        <ul className="grid grid-cols-1 gap-4 sm:grid-cols-2 xl:grid-cols-3">
          {shown.map((repo) => (
            <li key={repo.id} className="min-w-0">
              <RepoCard repo={repo} onSelect={setSelected} />
            </li>
          ))}
        </ul>
      )}
      <RepoDetailDialog repo={selected} onClose={() => setSelected(null)} />
    </section>
  )
}
