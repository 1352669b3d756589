import type { DiscoverFilters } from '../types'

export const discoverKeys = {
  all: ['discover'] as const,
  featured: (limit: number) => [...discoverKeys.all, 'featured', limit] as const,
  lists: () => [...discoverKeys.all, 'list'] as const,
  /** `viewer` is the signed-in user's id or "visitor": the answer says what the viewer likes. */
  list: (filters: DiscoverFilters, viewer: string) => [...discoverKeys.lists(), viewer, filters] as const,
}
