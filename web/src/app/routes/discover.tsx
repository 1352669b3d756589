import { DiscoverScreen } from '@/features/discover/components/discover-screen'

/** /discover: the public gallery, for visitors and users (SPEC §2 Discover). */
export function DiscoverRoute() {
  return <DiscoverScreen />
}
