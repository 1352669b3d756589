// What the UI allows per deployment status (SPEC §4 Deployment status).
import type { Deployment } from './types'

export const DEPLOYMENT_STATUSES = ['pending', 'building', 'deploying', 'live', 'failed', 'stopped'] as const

/** Stop is offered while live, building or deploying. */
export function canStop(status: string): boolean {
  return status === 'live' || status === 'building' || status === 'deploying'
}

/** Restart is offered when stopped. */
export function canRestart(status: string): boolean {
  return status === 'stopped'
}

/** Visit Site is offered for a live deployment with a URL. */
export function canVisit(d: Pick<Deployment, 'status' | 'url'>): boolean {
  return d.status === 'live' && Boolean(d.url)
}

/** Still on its way: the screens refresh while this holds. */
export function inProgress(status: string): boolean {
  return status === 'pending' || status === 'building' || status === 'deploying'
}

/** The filter tabs of the Deployments list, in order. */
export const DEPLOYMENT_FILTERS = [
  { value: 'all', label: 'All' },
  { value: 'live', label: 'Live' },
  { value: 'building', label: 'Building' },
  { value: 'deploying', label: 'Deploying' },
  { value: 'failed', label: 'Failed' },
  { value: 'pending', label: 'Pending' },
] as const

export type DeploymentFilter = (typeof DEPLOYMENT_FILTERS)[number]['value']

export function filterDeployments<T extends { status: string }>(list: T[], filter: DeploymentFilter): T[] {
  return filter === 'all' ? list : list.filter((d) => d.status === filter)
}

/** The first 7 characters of a commit hash. */
export function shortHash(hash: string | undefined | null): string {
  return (hash ?? '').slice(0, 7)
}

/** Finished well: its files can be served again (live now, or stopped since). */
export function succeeded(status: string): boolean {
  return status === 'live' || status === 'stopped'
}

/**
 * The production deployment being served: the live one of `list` (the active
 * one first), else the project's active one (stopped).
 */
export function liveProduction<T extends Pick<Deployment, '_id' | 'status'>>(
  list: T[],
  activeId: string | undefined,
): T | undefined {
  // The list refetches on its own (pushes, hooks) while the project's activeId may be older:
  // a live deployment wins over a stopped active one.
  return (
    list.find((d) => d._id === activeId && d.status === 'live') ??
    list.find((d) => d.status === 'live') ??
    (activeId ? list.find((d) => d._id === activeId) : undefined)
  )
}

/**
 * Promote is offered on a successful production deployment that is not the
 * one being served and whose files are still kept.
 */
export function canPromote(
  d: Pick<Deployment, '_id' | 'status' | 'target' | 'prunedAt'>,
  liveId: string | undefined,
): boolean {
  return d.target !== 'preview' && d._id !== liveId && succeeded(d.status) && !d.prunedAt
}
