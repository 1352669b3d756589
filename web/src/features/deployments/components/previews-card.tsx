import { Link } from 'react-router'
import { ExternalLink, GitBranch, GitPullRequest, Lock } from 'lucide-react'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { EmptyState } from '@/components/ui/empty-state'
import { Skeleton } from '@/components/ui/skeleton'
import { Switch } from '@/components/ui/switch'
import { paths } from '@/config/paths'
import { formatRelativeTime } from '@/utils/format'
import { usePreviews } from '../api/get-previews'
import { usePreviewAccess, useSetPreviewsOpen } from '../api/preview-access'
import { canVisit } from '../status'
import { previewSource } from '../trigger'
import { DeploymentStatusBadge } from './deployment-status'

/** A project's preview deployments: one per branch or pull request, each at its own URL. */
export function PreviewsCard({ projectId }: { projectId: string }) {
  const query = usePreviews(projectId)
  const list = query.data ?? []
  return (
    <Card>
      <CardHeader>
        <CardTitle className="flex items-center gap-2">
          <GitPullRequest className="size-4 text-zinc-400" aria-hidden="true" />
          Previews
        </CardTitle>
        <CardDescription>Every other branch and pull request gets an address of its own.</CardDescription>
      </CardHeader>
      <CardContent>
        <PreviewAccessSwitch projectId={projectId} />
        {query.isError ? (
          <p role="alert" className="text-sm text-red-600 dark:text-red-400">
            The previews could not be loaded.
          </p>
        ) : query.isPending ? (
          <div aria-busy="true" aria-label="Loading previews" className="space-y-3">
            {[0, 1].map((i) => (
              <Skeleton key={i} className="h-10" />
            ))}
          </div>
        ) : list.length === 0 ? (
          <EmptyState
            icon={GitBranch}
            title="No previews yet"
            description="Push a branch or open a pull request to get a preview."
            className="py-8"
          />
        ) : (
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" aria-label="Previews">
            {list.map((d) => {
              const pr = Boolean(d.metadata?.pullRequest)
              const Icon = pr ? GitPullRequest : GitBranch
              return (
                <li key={d._id} data-testid="preview-row" className="flex items-start gap-3 py-3 first:pt-0 last:pb-0">
                  <Icon className="mt-0.5 size-4 shrink-0 text-zinc-400" aria-hidden="true" />
                  <div className="min-w-0 flex-1">
                    <div className="flex flex-wrap items-center gap-x-2 gap-y-1">
                      <Link
                        to={paths.deployment.getHref(d._id)}
                        className={
                          'min-w-0 truncate rounded text-sm font-medium text-zinc-900 hover:underline dark:text-zinc-100 ' +
                          (pr ? '' : 'font-mono')
                        }
                      >
                        {previewSource(d)}
                      </Link>
                      <DeploymentStatusBadge status={d.status} />
                      <span className="ml-auto text-xs whitespace-nowrap text-zinc-500 dark:text-zinc-400">
                        {formatRelativeTime(d.createdAt)}
                      </span>
                    </div>
                    {d.url ? (
                      canVisit(d) ? (
                        <a
                          href={d.url}
                          target="_blank"
                          rel="noopener noreferrer"
                          title={d.url}
                          className="mt-0.5 inline-flex max-w-full min-w-0 items-center gap-1 rounded font-mono text-xs text-indigo-600 hover:underline dark:text-indigo-400"
                        >
                          <span className="truncate">{d.url.replace(/^https?:\/\//, '')}</span>
                          <ExternalLink className="size-3 shrink-0" aria-hidden="true" />
                        </a>
                      ) : (
                        <p className="mt-0.5 truncate font-mono text-xs text-zinc-500 dark:text-zinc-400" title={d.url}>
                          {d.url.replace(/^https?:\/\//, '')}
                        </p>
                      )
                    ) : null}
                  </div>
                </li>
              )
            })}
          </ul>
        )}
      </CardContent>
    </Card>
  )
}

/**
 * For a private repository: previews need the owner's sign-in unless the
 * owner opens them to anyone with the link (issue 24). Nothing for a
 * public repository, whose previews are public like its code.
 */
function PreviewAccessSwitch({ projectId }: { projectId: string }) {
  const access = usePreviewAccess(projectId)
  const setOpen = useSetPreviewsOpen(projectId)
  if (!access.data?.private) return null
  const open = setOpen.isPending && setOpen.variables !== undefined ? setOpen.variables : access.data.open
  return (
    <div className="mb-4 flex items-start gap-3 rounded-lg border border-zinc-200 bg-zinc-50 p-3 dark:border-zinc-800 dark:bg-zinc-900/50">
      <Lock className="mt-0.5 size-4 shrink-0 text-zinc-400" aria-hidden="true" />
      <Switch
        checked={open}
        disabled={setOpen.isPending}
        onChange={(next) => setOpen.mutate(next)}
        label="Anyone with the link can open previews"
        hint={
          open
            ? 'Previews of this private repository are open to anyone who has their address.'
            : 'This repository is private: its previews ask for your Gantry sign-in, and only you can open them.'
        }
      />
    </div>
  )
}
