import { GitBranch, Lock, TriangleAlert } from 'lucide-react'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { Spinner } from '@/components/ui/spinner'
import { frameworkName } from '../../frameworks'
import { ProjectTypeIcon } from '../project-type-icon'

export type RepoSummaryProps = {
  fullName: string
  description?: string
  defaultBranch?: string
  private?: boolean
  /** null while detection runs ("Detecting..."). */
  framework: string | null
  detectError?: string
  onChange: () => void
}

/** The chosen repository, its framework and default branch, with Change (SPEC §2). */
export function RepoSummary(props: RepoSummaryProps) {
  const detecting = props.framework === null
  return (
    <Card className="p-5" aria-label="Selected repository">
      <div className="flex flex-col gap-4 sm:flex-row sm:items-start sm:justify-between">
        <div className="flex min-w-0 items-start gap-3">
          <ProjectTypeIcon type={props.framework || undefined} />
          <div className="min-w-0">
            <p className="flex items-center gap-2 truncate font-semibold text-zinc-900 dark:text-zinc-50">
              {props.private ? <Lock className="size-4 shrink-0 text-amber-500" aria-label="Private" /> : null}
              <span className="truncate font-mono text-sm">{props.fullName}</span>
            </p>
            {props.description ? (
              <p className="mt-1 line-clamp-2 text-sm text-zinc-600 dark:text-zinc-400">{props.description}</p>
            ) : null}
          </div>
        </div>
        <Button variant="secondary" size="sm" onClick={props.onChange} className="self-start">
          Change
        </Button>
      </div>
      <dl className="mt-4 flex flex-wrap gap-x-8 gap-y-3 border-t border-zinc-100 pt-4 text-sm dark:border-zinc-800">
        <div>
          <dt className="text-xs text-zinc-500 dark:text-zinc-400">Framework</dt>
          <dd className="mt-0.5 font-medium text-zinc-900 dark:text-zinc-100" data-testid="framework">
            {detecting ? (
              <span className="inline-flex items-center gap-2 text-zinc-600 dark:text-zinc-400">
                <Spinner className="size-3.5" />
                Detecting...
              </span>
            ) : props.framework ? (
              <Badge tone="accent">{frameworkName(props.framework)}</Badge>
            ) : (
              <span className="text-zinc-600 dark:text-zinc-400">Not detected</span>
            )}
          </dd>
        </div>
        <div>
          <dt className="text-xs text-zinc-500 dark:text-zinc-400">Default branch</dt>
          <dd className="mt-0.5 inline-flex items-center gap-1 font-mono text-zinc-900 dark:text-zinc-100">
            <GitBranch className="size-3.5 text-zinc-400" aria-hidden="true" />
            {props.defaultBranch || '—'}
          </dd>
        </div>
      </dl>
      {props.detectError && !detecting ? (
        <p className="mt-3 text-sm text-zinc-600 dark:text-zinc-400">{props.detectError}</p>
      ) : null}
      {props.private ? (
        <p
          role="note"
          className="mt-4 flex items-start gap-2 rounded-lg bg-amber-50 px-3 py-2.5 text-sm text-amber-800 ring-1 ring-amber-600/20 ring-inset dark:bg-amber-500/10 dark:text-amber-200 dark:ring-amber-400/25"
        >
          <TriangleAlert className="mt-0.5 size-4 shrink-0" aria-hidden="true" />
          This repository is private. Make sure your GitHub account is connected with permission to access it.
        </p>
      ) : null}
    </Card>
  )
}
