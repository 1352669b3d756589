// Shapes of the public gallery's answers (SPEC §3 Public deployment, §7 Public gallery).
import type { DISCOVER_SORTS } from '@/config/constants'
import type { PublicDeployment } from '@/types/api'

export type DiscoverSort = (typeof DISCOVER_SORTS)[number]
export type DiscoverCategory = 'all' | 'frontend' | 'backend' | 'static'

/** What the screen filters by; the server does the filtering. */
export type DiscoverFilters = { search: string; category: DiscoverCategory; sort: DiscoverSort }

/** An app on Discover: a public deployment with its counts and whether the viewer likes it. */
export type DiscoverApp = PublicDeployment & { views: number; likeCount: number; liked: boolean }

/** One page of GET /api/deployments/public. */
export type GalleryPage = {
  deployments: DiscoverApp[]
  /** Apps matching the search and category. */
  total: number
  page: number
  limit: number
  hasMore: boolean
  /** The header: every listed app and the developers behind them. */
  stats: { apps: number; developers: number }
  /** The chips, under the current search. */
  categories: Record<DiscoverCategory, number>
}
