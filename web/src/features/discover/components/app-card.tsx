import { useRef } from 'react'
import { Clock, ExternalLink, Eye, Heart, Moon } from 'lucide-react'
import { Badge } from '@/components/ui/badge'
import { buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { cn } from '@/lib/cn'
import { formatRelativeTime } from '@/utils/format'
import { SLEEPING_HINT } from '@/config/constants'
import { useWakeHint } from '../api/wake-hint'
import type { DiscoverApp } from '../types'
import { AppTypeIcon, appTypeLabel } from './app-type-icon'

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 })

/** A count as the cards show it: 999, 1.2K, 3.4M. */
export function formatCount(n: number): string {
  return compact.format(n)
}

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`

type AppCardProps = {
  app: DiscoverApp
  onVisit: (app: DiscoverApp) => void
  onToggleLike: (app: DiscoverApp) => void
}

/** One live app on Discover (SPEC §2 Discover: app cards). */
export function AppCard({ app, onVisit, onToggleLike }: AppCardProps) {
  const { project, user } = app
  const ref = useRef<HTMLDivElement>(null)
  useWakeHint(ref, app._id, app.sleeping)
  return (
    <Card ref={ref} className="flex h-full flex-col p-5" data-testid="app-card">
      <div className="flex items-start gap-3">
        <AppTypeIcon type={project.type} />
        <div className="min-w-0 flex-1">
          <div className="flex items-start justify-between gap-2">
            <h3 className="min-w-0 truncate font-semibold text-zinc-900 dark:text-zinc-50" title={project.name}>
              {project.name}
            </h3>
            <Badge tone="accent" className="mt-0.5 shrink-0">
              {appTypeLabel(project.type)}
            </Badge>
          </div>
          <p className="truncate text-sm text-zinc-600 dark:text-zinc-400" title={`${user.fullName} @${user.username}`}>
            by <span className="text-zinc-800 dark:text-zinc-200">{user.fullName}</span>{' '}
            <span className="text-zinc-500 dark:text-zinc-400">@{user.username}</span>
          </p>
        </div>
      </div>

      <p className="mt-3 line-clamp-2 min-h-10 text-sm text-zinc-600 dark:text-zinc-400">
        {project.description || 'No description'}
      </p>

      <div className="mt-4 flex flex-wrap items-center gap-x-4 gap-y-1 text-xs text-zinc-500 dark:text-zinc-400">
        <span className="inline-flex items-center gap-1" title={plural(app.views, 'view')}>
          <Eye className="size-3.5" aria-hidden="true" />
          <span>{formatCount(app.views)}</span>
          <span className="sr-only">views</span>
        </span>
        <span className="inline-flex items-center gap-1" title={plural(app.likeCount, 'like')}>
          <Heart className="size-3.5" aria-hidden="true" />
          <span data-testid="like-count">{formatCount(app.likeCount)}</span>
          <span className="sr-only">likes</span>
        </span>
        <span className="inline-flex items-center gap-1">
          <Clock className="size-3.5" aria-hidden="true" />
          <time dateTime={app.createdAt}>{formatRelativeTime(app.createdAt)}</time>
        </span>
        {app.sleeping ? <SleepingBadge /> : null}
      </div>

      <div className="mt-auto pt-5">
        <div className="flex items-center justify-between gap-2 border-t border-zinc-100 pt-4 dark:border-zinc-800">
          <a
            href={app.url}
            target="_blank"
            rel="noopener noreferrer"
            onClick={() => onVisit(app)}
            className={buttonClasses({ variant: 'secondary', size: 'sm' })}
            aria-label={`Visit App: ${project.name} (opens in a new tab)`}
          >
            Visit App
            <ExternalLink className="size-3.5" aria-hidden="true" />
          </a>
          <LikeButton app={app} onToggle={onToggleLike} />
        </div>
      </div>
    </Card>
  )
}

/** The like toggle: a heart, filled while the viewer likes the app. */
export function LikeButton({ app, onToggle }: { app: DiscoverApp; onToggle: (app: DiscoverApp) => void }) {
  return (
    <button
      type="button"
      onClick={() => onToggle(app)}
      aria-pressed={app.liked}
      aria-label={`${app.liked ? 'Unlike' : 'Like'} ${app.project.name}`}
      className={cn(
        buttonClasses({ variant: 'none', size: 'sm' }),
        'border',
        app.liked
          ? 'border-rose-200 bg-rose-50 text-rose-700 hover:bg-rose-100 dark:border-rose-500/30 dark:bg-rose-500/15 dark:text-rose-300 dark:hover:bg-rose-500/25'
          : 'border-zinc-200 text-zinc-700 hover:bg-zinc-50 dark:border-zinc-700 dark:text-zinc-300 dark:hover:bg-zinc-800',
      )}
    >
      <Heart
        className={cn('size-4 transition-transform motion-safe:active:scale-125', app.liked && 'fill-current')}
        aria-hidden="true"
      />
      {app.liked ? 'Liked' : 'Like'}
    </button>
  )
}

/** A sleeping app's mark on its card: it wakes when visited (the card already sent a wake hint). */
export function SleepingBadge() {
  return (
    <Badge tone="info" className="gap-1" data-status="sleeping" title={SLEEPING_HINT}>
      <Moon className="size-3" aria-hidden="true" />
      Sleeping
    </Badge>
  )
}
