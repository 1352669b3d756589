// How a deployment came to be, said as GitHub says it, and where it is served.
// One helper for every screen (list, detail, project History, Production card).
import type { Deployment } from './types'

type Source = Pick<Deployment, 'metadata' | 'promotedAt' | 'target'>

/**
 * The trigger of a deployment in words: "Pushed by Maya Chen", "Pull request
 * #12", "Deploy hook", "Rollback" (a promoted earlier deployment, or trigger
 * rollback), "Redeploy", "Manual" (also for a missing or unknown trigger).
 */
export function triggerLabel(d: Source): string {
  const meta = d.metadata ?? {}
  if (d.promotedAt || meta.trigger === 'rollback') return 'Rollback'
  switch (meta.trigger) {
    case 'push': {
      const author = meta.author?.trim()
      return author ? `Pushed by ${author}` : 'Pushed'
    }
    case 'pull_request':
      return meta.pullRequest ? `Pull request #${meta.pullRequest}` : 'Pull request'
    case 'hook':
      return 'Deploy hook'
    case 'redeploy':
      return 'Redeploy'
    default:
      return 'Manual'
  }
}

/** A preview deployment (its own URL, never production); anything else is production. */
export function isPreview(d: Pick<Deployment, 'target'>): boolean {
  return d.target === 'preview'
}

/** "Production" or "Preview". */
export function targetLabel(d: Pick<Deployment, 'target'>): string {
  return isPreview(d) ? 'Preview' : 'Production'
}

/** What a preview was built from: "Pull request #12", else its branch. */
export function previewSource(d: Pick<Deployment, 'metadata'>): string {
  const meta = d.metadata ?? {}
  if (meta.pullRequest) return `Pull request #${meta.pullRequest}`
  return meta.branch || 'Unknown branch'
}
