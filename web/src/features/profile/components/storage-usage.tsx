import { HardDrive } from 'lucide-react'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { Skeleton } from '@/components/ui/skeleton'
import { KEEP_DEPLOYMENTS, STORAGE_WARN_RATIO } from '@/config/constants'
import { cn } from '@/lib/cn'
import type { StorageUsage } from '@/types/api'
import { formatSize } from '@/utils/format'
import { usePlanStorage, useUserStats } from '../api/get-user-stats'

type Level = 'ok' | 'high' | 'full'

/** full at or over the budget (deploys are refused), high from 80 %. */
export function storageLevel(s: StorageUsage): Level {
  if (s.used >= s.budget) return 'full'
  return s.used >= s.budget * STORAGE_WARN_RATIO ? 'high' : 'ok'
}

/** "412 MB of 1 GB" */
export function storageLabel(s: StorageUsage): string {
  return `${formatSize(s.used)} of ${formatSize(s.budget)}`
}

const barColours: Record<Level, string> = {
  ok: 'bg-indigo-600 dark:bg-indigo-400',
  high: 'bg-amber-500 dark:bg-amber-400',
  full: 'bg-red-600 dark:bg-red-500',
}

/** A bar of the storage used against the budget, exposed as a meter. */
export function StorageBar({ storage, className }: { storage: StorageUsage; className?: string }) {
  const share = storage.budget > 0 ? Math.min(1, storage.used / storage.budget) : 1
  // Anything used shows at least a sliver.
  const width = storage.used > 0 ? Math.max(share * 100, 2) : 0
  return (
    <div
      role="meter"
      aria-label="Storage used"
      aria-valuemin={0}
      aria-valuemax={storage.budget}
      aria-valuenow={Math.min(storage.used, storage.budget)}
      aria-valuetext={storageLabel(storage)}
      className={cn('h-1.5 w-full overflow-hidden rounded-full bg-zinc-200 dark:bg-zinc-800', className)}
    >
      <div
        className={cn(
          'h-full rounded-full transition-[width] motion-reduce:transition-none',
          barColours[storageLevel(storage)],
        )}
        style={{ width: `${width}%` }}
      />
    </div>
  )
}

/** The storage line of the sidebar's plan card: "412 MB of 1 GB" and a bar. */
export function PlanStorageUsage() {
  const { data, isPending } = usePlanStorage()
  const storage = data?.storage
  if (isPending) return <Skeleton className="mt-3 h-6 w-full" />
  if (!storage) return null
  const full = storageLevel(storage) === 'full'
  return (
    <div className="mt-3" data-testid="plan-storage">
      <div className="mb-1.5 flex items-baseline justify-between gap-2 text-xs">
        <span className="text-zinc-600 dark:text-zinc-400">Storage</span>
        <span className="font-medium whitespace-nowrap text-zinc-800 tabular-nums dark:text-zinc-200">
          {storageLabel(storage)}
        </span>
      </div>
      <StorageBar storage={storage} />
      {full ? (
        <p className="mt-1.5 text-xs text-red-700 dark:text-red-400">Full: free space to deploy again.</p>
      ) : null}
    </div>
  )
}

/** The storage card of the profile: usage, budget, what counts, and the pruning rule. */
export function StorageCard() {
  const query = useUserStats()
  const storage = query.data?.storage
  const level = storage ? storageLevel(storage) : 'ok'
  return (
    <Card>
      <CardHeader>
        <CardTitle className="flex items-center gap-2">
          <HardDrive className="size-4 text-zinc-400 dark:text-zinc-500" aria-hidden="true" />
          Storage
        </CardTitle>
      </CardHeader>
      <CardContent className="space-y-4 pt-3">
        {storage ? (
          <>
            <div>
              <p className="mb-2 text-sm text-zinc-600 dark:text-zinc-400" data-testid="storage-total">
                <span className="text-2xl font-semibold text-zinc-900 tabular-nums dark:text-zinc-50">
                  {formatSize(storage.used)}
                </span>{' '}
                of {formatSize(storage.budget)}
              </p>
              <StorageBar storage={storage} />
            </div>
            <dl className="space-y-1.5 text-sm">
              <div className="flex justify-between gap-4">
                <dt className="text-zinc-600 dark:text-zinc-400">Sites and app builds</dt>
                <dd className="font-medium text-zinc-900 tabular-nums dark:text-zinc-100">{formatSize(storage.files)}</dd>
              </div>
              <div className="flex justify-between gap-4">
                <dt className="text-zinc-600 dark:text-zinc-400">Logs</dt>
                <dd className="font-medium text-zinc-900 tabular-nums dark:text-zinc-100">{formatSize(storage.logs)}</dd>
              </div>
            </dl>
            {level === 'full' ? (
              <p className="rounded-lg border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800 dark:border-red-500/30 dark:bg-red-500/10 dark:text-red-300">
                Your storage is full, so new deployments are refused. Delete old deployments or projects to free
                space.
              </p>
            ) : level === 'high' ? (
              <p className="rounded-lg border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-500/30 dark:bg-amber-500/10 dark:text-amber-200">
                Your storage is almost full. Deploys are refused once it is.
              </p>
            ) : null}
          </>
        ) : query.isPending ? (
          <Skeleton className="h-14 w-full" />
        ) : (
          // The statistics card beside it offers the retry (the same query).
          <p className="text-sm text-zinc-600 dark:text-zinc-400">Storage could not be loaded.</p>
        )}
        <p className="text-xs text-zinc-500 dark:text-zinc-400">
          Each project keeps the files of its newest {KEEP_DEPLOYMENTS} stopped deployments for rollback; older
          ones are removed automatically.
        </p>
      </CardContent>
    </Card>
  )
}
