import { infiniteQueryOptions, keepPreviousData, useInfiniteQuery } from '@tanstack/react-query'
import { api } from '@/lib/api-client'
import type { DiscoverApp, DiscoverFilters, GalleryPage } from '../types'
import { discoverKeys } from './keys'

/** Apps per page of Discover ("Load more" fetches the next one). */
export const DISCOVER_PAGE_SIZE = 24

export function emptyGalleryPage(page = 1): GalleryPage {
  return {
    deployments: [],
    total: 0,
    page,
    limit: DISCOVER_PAGE_SIZE,
    hasMore: false,
    stats: { apps: 0, developers: 0 },
    categories: { all: 0, frontend: 0, backend: 0, static: 0 },
  }
}

/**
 * One page of the public gallery for `filters`. A failure is only logged and
 * gives an empty page (SPEC §8: a load failure gives an empty list).
 */
export async function getPublicDeployments(
  filters: DiscoverFilters,
  page: number,
  signal?: AbortSignal,
): Promise<GalleryPage> {
  try {
    const data = await api.get<Partial<GalleryPage> | undefined>('/api/deployments/public', {
      params: {
        search: filters.search.trim() || undefined,
        category: filters.category === 'all' ? undefined : filters.category,
        sort: filters.sort,
        limit: DISCOVER_PAGE_SIZE,
        page,
      },
      signal,
    })
    const empty = emptyGalleryPage(page)
    return {
      ...empty,
      ...data,
      deployments: (data?.deployments ?? []).map(
        (d): DiscoverApp => ({ ...d, views: d.views ?? 0, likeCount: d.likeCount ?? 0, liked: d.liked ?? false }),
      ),
      stats: { ...empty.stats, ...data?.stats },
      categories: { ...empty.categories, ...data?.categories },
    }
  } catch (err) {
    if (signal?.aborted) throw err
    console.warn('Could not load the apps of Discover:', err)
    return emptyGalleryPage(page)
  }
}

export function publicDeploymentsQueryOptions(filters: DiscoverFilters, viewer: string) {
  return infiniteQueryOptions({
    queryKey: discoverKeys.list(filters, viewer),
    queryFn: ({ pageParam, signal }) => getPublicDeployments(filters, pageParam, signal),
    initialPageParam: 1,
    getNextPageParam: (last: GalleryPage) => (last.hasMore ? last.page + 1 : undefined),
    // While a new search or filter loads, the old answer stays on screen.
    placeholderData: keepPreviousData,
    staleTime: 30 * 1000,
  })
}

export function usePublicDeployments(filters: DiscoverFilters, viewer: string) {
  return useInfiniteQuery(publicDeploymentsQueryOptions(filters, viewer))
}
