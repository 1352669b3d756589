import { sharedKeys } from '@/lib/query-keys'

export const profileKeys = {
  all: sharedKeys.profile,
  stats: () => [...profileKeys.all, 'stats'] as const,
}
