import { HardDrive } from 'lucide-react'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { Skeleton } from '@/components/ui/skeleton'
import { KEEP_DEPLOYMENTS, STORAGE_WARN_RATIO } from '@/config/constants'
import { cn } from '@/lib/cn'
import type { StorageUsage } from '@/types/api'
import { formatSize } from '@/utils/format'
import { usePlanStorage, useUserStats } from '../api/get-user-stats'

type Level = 'ok' | 'high' | 'full'

/** full at or over the budget (a deploy makes room first), high from 80 %. */
export function storageLevel(s: StorageUsage): Level {
  if (s.used >= s.budget) return 'full'
  return s.used >= s.budget * STORAGE_WARN_RATIO ? 'high' : 'ok'
}

/**
 * Whether a deploy is refused: what making room cannot free (live
 * deployments and logs: everything but rollbacks) fills the budget on its
 * own. Build caches are the platform's: not in the budget.
 */
export function deploysRefused(s: StorageUsage): boolean {
  return s.used - (s.rollbacks ?? 0) >= s.budget
}

type Part = { key: string; label: string; bytes: number; swatch: string; hint?: string }

/** What the account's storage holds, in the order the card lists it. */
function storageParts(s: StorageUsage): Part[] {
  const split = s.sites !== undefined && s.apps !== undefined && s.rollbacks !== undefined
  const files: Part[] = split
    ? [
        { key: 'sites', label: 'Live sites', bytes: s.sites ?? 0, swatch: 'bg-indigo-600 dark:bg-indigo-400' },
        { key: 'apps', label: 'Live apps', bytes: s.apps ?? 0, swatch: 'bg-sky-500 dark:bg-sky-400' },
        {
          key: 'rollbacks',
          label: 'Kept for rollback',
          bytes: s.rollbacks ?? 0,
          swatch: 'bg-zinc-400 dark:bg-zinc-500',
          hint: 'removed first when space runs out',
        },
      ]
    : [{ key: 'files', label: 'Sites and app builds', bytes: s.files, swatch: 'bg-indigo-600 dark:bg-indigo-400' }]
  return [
    ...files,
    ...(s.data
      ? [{ key: 'data', label: 'App data (/data)', bytes: s.data, swatch: 'bg-emerald-500 dark:bg-emerald-400' }]
      : []),
    { key: 'logs', label: 'Logs', bytes: s.logs, swatch: 'bg-amber-500 dark:bg-amber-400' },
  ]
}

/** What a storage bar says to assistive technology: a meter of used against the budget. */
function meterProps(storage: StorageUsage) {
  return {
    role: 'meter',
    'aria-label': 'Storage used',
    'aria-valuemin': 0,
    'aria-valuemax': storage.budget,
    'aria-valuenow': Math.min(storage.used, storage.budget),
    'aria-valuetext': storageLabel(storage),
  } as const
}

/** The card's bar: each part's share of the budget, side by side. */
function StorageSplitBar({ storage, parts }: { storage: StorageUsage; parts: Part[] }) {
  const whole = Math.max(storage.budget, storage.used, 1)
  return (
    <div
      {...meterProps(storage)}
      className="flex h-2 w-full gap-px overflow-hidden rounded-full bg-zinc-200 dark:bg-zinc-800"
      data-testid="storage-split-bar"
    >
      {parts
        .filter((p) => p.bytes > 0)
        .map((p) => (
          <div
            key={p.key}
            className={cn('h-full min-w-1 first:rounded-l-full last:rounded-r-full', p.swatch)}
            style={{ width: `${(p.bytes / whole) * 100}%` }}
          />
        ))}
    </div>
  )
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
      {...meterProps(storage)}
      className={cn('h-1.5 w-full overflow-hidden rounded-full bg-zinc-200 dark:bg-zinc-800', className)}
    >
      <div
        className={cn(
          'h-full rounded-full transition-[width] motion-reduce:transition-none',
          // Full of rollbacks only: a deploy makes room, so a warning.
          barColours[storageLevel(storage) === 'full' && !deploysRefused(storage) ? 'high' : storageLevel(storage)],
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
        deploysRefused(storage) ? (
          <p className="mt-1.5 text-xs text-red-700 dark:text-red-400">Full: free space to deploy again.</p>
        ) : (
          <p className="mt-1.5 text-xs text-amber-800 dark:text-amber-300">Full: a deploy removes old rollbacks.</p>
        )
      ) : null}
    </div>
  )
}

/** The storage card of the profile: usage against the budget, what it is made of, and the pruning rule. */
export function StorageCard() {
  const query = useUserStats()
  const storage = query.data?.storage
  const level = storage ? storageLevel(storage) : 'ok'
  const parts = storage ? storageParts(storage) : []
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
              <StorageSplitBar storage={storage} parts={parts} />
            </div>
            <dl className="space-y-1.5 text-sm" data-testid="storage-split">
              {parts.map((p) => (
                <div key={p.key} className="flex items-baseline justify-between gap-4">
                  <dt className="flex min-w-0 items-baseline gap-2 text-zinc-600 dark:text-zinc-400">
                    <span className={cn('size-2 shrink-0 self-center rounded-full', p.swatch)} aria-hidden="true" />
                    <span>
                      {p.label}
                      {p.hint ? (
                        <span className="block text-xs text-zinc-500 dark:text-zinc-500">
                          {p.hint}
                        </span>
                      ) : null}
                    </span>
                  </dt>
                  <dd className="font-medium whitespace-nowrap text-zinc-900 tabular-nums dark:text-zinc-100">
                    {formatSize(p.bytes)}
                  </dd>
                </div>
              ))}
            </dl>
            {level === 'full' ? (
              deploysRefused(storage) ? (
                <p className="rounded-lg border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800 dark:border-red-500/30 dark:bg-red-500/10 dark:text-red-300">
                  Your storage is full of live deployments and logs, so new deployments are refused. Stop or delete a
                  project, or clear its logs, to free space.
                </p>
              ) : (
                <p className="rounded-lg border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-500/30 dark:bg-amber-500/10 dark:text-amber-200">
                  Your storage is full. Your next deploy first removes the oldest deployments kept for rollback to
                  make room.
                </p>
              )
            ) : level === 'high' ? (
              <p className="rounded-lg border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-500/30 dark:bg-amber-500/10 dark:text-amber-200">
                Your storage is almost full. Once it is, a deploy removes the oldest deployments kept for rollback
                to make room, and is refused only when live deployments and logs fill it.
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
          ones are removed automatically, and the oldest go first when a deploy needs room.
        </p>
      </CardContent>
    </Card>
  )
}
