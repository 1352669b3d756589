import { useEffect, useMemo, useRef, useState } from 'react'
import { Link, useSearchParams } from 'react-router'
import { Code2, Rocket, Search, SearchX, Users, X } from 'lucide-react'
import { Button, buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { EmptyState } from '@/components/ui/empty-state'
import { fieldClasses } from '@/components/ui/input'
import { PageHeader } from '@/components/ui/page-header'
import { Select } from '@/components/ui/select'
import { Skeleton } from '@/components/ui/skeleton'
import { DISCOVER_SORTS } from '@/config/constants'
import { paths } from '@/config/paths'
import { cn } from '@/lib/cn'
import { useAuth } from '@/lib/auth'
import { emptyGalleryPage, usePublicDeployments } from '../api/get-public-deployments'
import { useRecordView } from '../api/record-view'
import { useToggleLike } from '../api/toggle-like'
import type { DiscoverApp, DiscoverCategory, DiscoverFilters, DiscoverSort } from '../types'
import { AppCard } from './app-card'
import { CATEGORY_CHIPS, CategoryChips } from './category-chips'
import { TrendingStrip } from './trending-strip'

/** How long the search box waits after the last keystroke before it searches. */
export const SEARCH_DEBOUNCE_MS = 300

const SORT_OPTIONS: ReadonlyArray<{ value: DiscoverSort; label: string }> = [
  { value: 'recent', label: 'Recent' },
  { value: 'oldest', label: 'Oldest' },
  { value: 'name', label: 'Name' },
  { value: 'popular', label: 'Popular' },
  { value: 'trending', label: 'Trending' },
]

/** Reads the filters from the address (?search=&category=&sort=), ignoring unknown values. */
export function parseFilters(params: URLSearchParams): DiscoverFilters {
  const category = params.get('category') as DiscoverCategory | null
  const sort = params.get('sort') as DiscoverSort | null
  return {
    search: (params.get('search') ?? '').trim(),
    category: category && CATEGORY_CHIPS.some((c) => c.value === category) ? category : 'all',
    sort: sort && DISCOVER_SORTS.includes(sort) ? sort : 'recent',
  }
}

const number = (n: number) => n.toLocaleString('en-US')
const plural = (n: number, one: string, many: string) => `${number(n)} ${n === 1 ? one : many}`

/**
 * Discover (SPEC §2): the public gallery of live apps, for visitors and
 * signed-in users. Search, category and sort live in the address, so a
 * filtered view can be shared; the server searches, filters, sorts, pages
 * and counts.
 */
export function DiscoverScreen() {
  const { user } = useAuth()
  const [params, setParams] = useSearchParams()
  const filters = parseFilters(params)
  const { search, category, sort } = filters

  const setFilter = (change: Partial<DiscoverFilters>) => {
    setParams(
      (prev) => {
        const next = new URLSearchParams(prev)
        for (const [key, value] of Object.entries(change)) {
          const isDefault = value === '' || (key === 'category' && value === 'all') || (key === 'sort' && value === 'recent')
          if (isDefault) next.delete(key)
          else next.set(key, value)
        }
        return next
      },
      { replace: true },
    )
  }

  // The box is typed into freely; the search follows it after a pause.
  const [input, setInput] = useState(search)
  const pushed = useRef(search)
  useEffect(() => {
    if (search !== pushed.current) {
      pushed.current = search
      setInput(search) // changed from elsewhere: Clear search, back button
    }
  }, [search])
  useEffect(() => {
    const value = input.trim()
    if (value === pushed.current) return
    const timer = setTimeout(() => {
      pushed.current = value
      setFilter({ search: value })
    }, SEARCH_DEBOUNCE_MS)
    return () => clearTimeout(timer)
    // setFilter is a fresh closure each render; the input alone decides.
  }, [input]) // eslint-disable-line react-hooks/exhaustive-deps

  const query = usePublicDeployments(filters, user?._id ?? 'visitor')
  const pages = query.data?.pages
  const first = pages?.[0] ?? emptyGalleryPage()
  const apps = useMemo(() => {
    const seen = new Map<string, DiscoverApp>()
    for (const page of pages ?? []) for (const app of page.deployments) if (!seen.has(app._id)) seen.set(app._id, app)
    return [...seen.values()]
  }, [pages])

  const visit = useRecordView()
  const like = useToggleLike()
  const onVisit = (app: DiscoverApp) => void visit(app._id)
  const onToggleLike = (app: DiscoverApp) => like.mutate(app)
  const filtered = search !== '' || category !== 'all'
  const clear = () => {
    pushed.current = ''
    setInput('')
    setFilter({ search: '', category: 'all' })
  }

  return (
    <>
      <PageHeader
        title="Discover"
        description="Live apps built and deployed by students and hobbyists on Gantry."
        actions={
          query.isPending ? (
            <Skeleton className="h-8 w-56" />
          ) : (
            <div className="flex flex-wrap gap-2 text-sm" data-testid="discover-stats">
              <span className="inline-flex items-center gap-1.5 rounded-full bg-indigo-50 px-3 py-1 font-medium text-indigo-700 dark:bg-indigo-500/15 dark:text-indigo-300">
                <Code2 className="size-4" aria-hidden="true" />
                {plural(first.stats.apps, 'live app', 'live apps')}
              </span>
              <span className="inline-flex items-center gap-1.5 rounded-full bg-zinc-100 px-3 py-1 font-medium text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">
                <Users className="size-4" aria-hidden="true" />
                {plural(first.stats.developers, 'developer', 'developers')}
              </span>
            </div>
          )
        }
      />

      <div className="mb-4 flex flex-col gap-3 sm:flex-row sm:items-end">
        <div className="relative flex-1">
          <label htmlFor="discover-search" className="sr-only">
            Search apps
          </label>
          <Search
            className="pointer-events-none absolute top-1/2 left-3 size-4 -translate-y-1/2 text-zinc-500"
            aria-hidden="true"
          />
          <input
            id="discover-search"
            type="search"
            value={input}
            onChange={(e) => setInput(e.target.value)}
            placeholder="Search apps or developers"
            maxLength={100}
            autoComplete="off"
            className={cn(fieldClasses, 'h-10 border-zinc-300 pr-9 pl-9 dark:border-zinc-700 [&::-webkit-search-cancel-button]:hidden')}
          />
          {input ? (
            <button
              type="button"
              onClick={() => setInput('')}
              aria-label="Clear the search box"
              className="absolute top-1/2 right-2 -translate-y-1/2 rounded-md p-1 text-zinc-500 hover:bg-zinc-100 hover:text-zinc-800 dark:hover:bg-zinc-800 dark:hover:text-zinc-100"
            >
              <X className="size-4" aria-hidden="true" />
            </button>
          ) : null}
        </div>
        <Select
          label="Sort by"
          inline
          value={sort}
          onChange={(e) => setFilter({ sort: e.target.value as DiscoverSort })}
          options={SORT_OPTIONS}
          className="[&_select]:h-10 [&_select]:min-w-36"
        />
      </div>

      <div className="mb-6">
        <CategoryChips value={category} counts={first.categories} onChange={(c) => setFilter({ category: c })} />
      </div>

      {sort === 'trending' && apps.length > 0 ? <TrendingStrip apps={apps} onVisit={onVisit} /> : null}

      {query.isPending ? (
        <AppGridSkeleton />
      ) : apps.length === 0 ? (
        <EmptyState
          icon={filtered ? SearchX : Rocket}
          title="No apps found"
          description={
            filtered
              ? 'No live app matches your search. Try other words or another category.'
              : 'Nobody has a live public app yet. Deploy yours and it shows up here.'
          }
          action={
            filtered ? (
              <Button variant="secondary" onClick={clear}>
                Clear search
              </Button>
            ) : (
              <Link
                to={user ? paths.newProject.getHref() : paths.register.getHref()}
                className={buttonClasses({ variant: 'primary' })}
              >
                Deploy your app
              </Link>
            )
          }
        />
      ) : (
        <>
          <ul
            aria-label="Apps"
            aria-busy={query.isPlaceholderData || undefined}
            className={cn(
              'grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3',
              query.isPlaceholderData && 'opacity-60 transition-opacity',
            )}
          >
            {apps.map((app) => (
              <li key={app._id} className="min-w-0">
                <AppCard app={app} onVisit={onVisit} onToggleLike={onToggleLike} />
              </li>
            ))}
          </ul>
          <div className="mt-8 flex flex-col items-center gap-3">
            <p className="text-sm text-zinc-600 dark:text-zinc-400" role="status">
              Showing {number(apps.length)} of {plural(first.total, 'app', 'apps')}
            </p>
            {query.hasNextPage ? (
              <Button variant="secondary" loading={query.isFetchingNextPage} onClick={() => void query.fetchNextPage()}>
                Load more
              </Button>
            ) : null}
          </div>
        </>
      )}
    </>
  )
}

function AppGridSkeleton() {
  return (
    <div className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3" aria-busy="true" aria-label="Loading apps">
      {Array.from({ length: 6 }, (_, i) => (
        <Card key={i} className="p-5">
          <div className="flex items-center gap-3">
            <Skeleton className="size-10 rounded-lg" />
            <div className="flex-1">
              <Skeleton className="h-4 w-2/3" />
              <Skeleton className="mt-2 h-3 w-1/2" />
            </div>
          </div>
          <Skeleton className="mt-4 h-3 w-full" />
          <Skeleton className="mt-2 h-3 w-4/5" />
          <Skeleton className="mt-6 h-8 w-28" />
        </Card>
      ))}
    </div>
  )
}
