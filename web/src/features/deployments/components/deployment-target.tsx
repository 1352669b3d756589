import { GitBranch, GitPullRequest } from 'lucide-react'
import { Badge } from '@/components/ui/badge'
import { cn } from '@/lib/cn'
import { isPreview, targetLabel } from '../trigger'
import type { Deployment } from '../types'

/** "Production" (accent) or "Preview" (neutral), next to a deployment's status. */
export function TargetBadge({ deployment }: { deployment: Pick<Deployment, 'target'> }) {
  return (
    <Badge tone={isPreview(deployment) ? 'neutral' : 'accent'} data-target={isPreview(deployment) ? 'preview' : 'production'}>
      {targetLabel(deployment)}
    </Badge>
  )
}

/** The branch a deployment was built from, or its pull request, with an icon. */
export function BranchLabel({
  deployment,
  className,
}: {
  deployment: Pick<Deployment, 'metadata'>
  className?: string
}) {
  const meta = deployment.metadata ?? {}
  if (!meta.branch && !meta.pullRequest) return null
  const Icon = meta.pullRequest ? GitPullRequest : GitBranch
  return (
    <span className={cn('inline-flex min-w-0 items-center gap-1 font-mono', className)}>
      <Icon className="size-3.5 shrink-0 text-zinc-400" aria-hidden="true" />
      <span className="truncate">{meta.branch || `#${meta.pullRequest}`}</span>
    </span>
  )
}
