import { Link } from 'react-router'
import { ExternalLink, Rocket } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { Dialog } from '@/components/ui/dialog'
import { paths } from '@/config/paths'
import type { GitHubRepo } from '@/types/api'
import { formatDateTime } from '@/utils/format'
import { RepoPrivacy } from './repo-privacy'

/** A repository's details, with its GitHub page and "Deploy This Repository" (SPEC §2). */
export function RepoDetailDialog({ repo, onClose }: { repo: GitHubRepo | null; onClose: () => void }) {
  return (
    <Dialog
      open={repo !== null}
      onClose={onClose}
      title={repo?.name ?? ''}
      className="sm:max-w-lg"
      footer={
        repo ? (
          <>
            <a
              href={repo.url}
              target="_blank"
              rel="noopener noreferrer"
              className={buttonClasses({ variant: 'secondary' })}
            >
              <ExternalLink className="size-4" aria-hidden="true" />
              View on GitHub
            </a>
            <Link to={paths.newProject.getHref(repo.id)} className={buttonClasses()} data-autofocus>
              <Rocket className="size-4" aria-hidden="true" />
              Deploy This Repository
            </Link>
          </>
        ) : null
      }
    >
      {repo ? (
        <div className="space-y-4">
          <div>
            <p className="break-all font-mono text-xs text-zinc-500 dark:text-zinc-400">{repo.fullName}</p>
            <p className="mt-2 text-sm text-zinc-700 dark:text-zinc-300">{repo.description || 'No description'}</p>
          </div>
          <dl className="grid grid-cols-1 gap-x-6 gap-y-3 rounded-lg border border-zinc-200 bg-zinc-50 p-4 text-sm sm:grid-cols-2 dark:border-zinc-800 dark:bg-zinc-950/40">
            <div className="min-w-0">
              <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">Default branch</dt>
              <dd className="mt-0.5 truncate font-mono text-zinc-900 dark:text-zinc-100">{repo.defaultBranch || 'main'}</dd>
            </div>
            <div>
              <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">Privacy</dt>
              <dd className="mt-1">
                <RepoPrivacy isPrivate={repo.private} />
              </dd>
            </div>
            <div>
              <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">Last updated</dt>
              <dd className="mt-0.5 text-zinc-900 dark:text-zinc-100">{formatDateTime(repo.updatedAt) || 'Never'}</dd>
            </div>
            <div>
              <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">Repository ID</dt>
              <dd className="mt-0.5 font-mono text-zinc-900 dark:text-zinc-100">{repo.id}</dd>
            </div>
          </dl>
        </div>
      ) : null}
    </Dialog>
  )
}
