import { ExternalLink, Eye, Flame, Heart } from 'lucide-react'
import { TRENDING_TOP } from '@/config/constants'
import type { DiscoverApp } from '../types'
import { formatCount } from './app-card'
import { AppTypeIcon } from './app-type-icon'

/** "Trending This Week": the top three apps of the trending order. */
export function TrendingStrip({ apps, onVisit }: { apps: DiscoverApp[]; onVisit: (app: DiscoverApp) => void }) {
  const top = apps.slice(0, TRENDING_TOP)
  if (top.length === 0) return null
  return (
    <section
      aria-labelledby="trending-heading"
      className="mb-8 rounded-xl border border-amber-200/70 bg-gradient-to-br from-amber-50 to-rose-50 p-5 dark:border-amber-500/20 dark:from-amber-500/10 dark:to-rose-500/5"
    >
      <h2
        id="trending-heading"
        className="flex items-center gap-2 text-base font-semibold text-zinc-900 dark:text-zinc-50"
      >
        <Flame className="size-5 text-amber-600 dark:text-amber-400" aria-hidden="true" />
        Trending This Week
      </h2>
      <ol className="mt-4 grid grid-cols-1 gap-3 md:grid-cols-3">
        {top.map((app, i) => (
          <li key={app._id} className="min-w-0">
            <a
              href={app.url}
              target="_blank"
              rel="noopener noreferrer"
              onClick={() => onVisit(app)}
              className="group flex items-center gap-3 rounded-lg bg-white/80 p-3 ring-1 ring-zinc-200/70 transition-colors hover:bg-white focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500 dark:bg-zinc-900/70 dark:ring-zinc-700/60 dark:hover:bg-zinc-900"
            >
              <span
                className="w-6 shrink-0 text-center text-lg font-semibold tabular-nums text-amber-700 dark:text-amber-400"
                aria-label={`Number ${i + 1}`}
              >
                {i + 1}
              </span>
              <AppTypeIcon type={app.project.type} className="size-9" />
              <span className="min-w-0 flex-1">
                <span className="block truncate text-sm font-semibold text-zinc-900 group-hover:underline dark:text-zinc-50">
                  {app.project.name}
                </span>
                <span className="flex items-center gap-2 text-xs text-zinc-600 dark:text-zinc-400">
                  <span className="min-w-0 truncate">@{app.user.username}</span>
                  <span className="inline-flex shrink-0 items-center gap-1">
                    <Eye className="size-3" aria-hidden="true" />
                    {formatCount(app.views)}
                    <span className="sr-only">views</span>
                  </span>
                  <span className="inline-flex shrink-0 items-center gap-1">
                    <Heart className="size-3" aria-hidden="true" />
                    {formatCount(app.likeCount)}
                    <span className="sr-only">likes</span>
                  </span>
                </span>
              </span>
              <ExternalLink className="size-3.5 shrink-0 text-zinc-400" aria-hidden="true" />
              <span className="sr-only">(opens in a new tab)</span>
            </a>
          </li>
        ))}
      </ol>
    </section>
  )
}
