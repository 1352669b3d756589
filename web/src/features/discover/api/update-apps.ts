import type { InfiniteData, QueryClient } from '@tanstack/react-query'
import type { DiscoverApp, GalleryPage } from '../types'
import { discoverKeys } from './keys'

/** Applies `change` to app `id` in every cached Discover list. */
export function updateCachedApp(
  queryClient: QueryClient,
  id: string,
  change: (app: DiscoverApp) => DiscoverApp,
): void {
  queryClient.setQueriesData<InfiniteData<GalleryPage>>({ queryKey: discoverKeys.lists() }, (data) =>
    data
      ? {
          ...data,
          pages: data.pages.map((page) => ({
            ...page,
            deployments: page.deployments.map((app) => (app._id === id ? change(app) : app)),
          })),
        }
      : data,
  )
}
