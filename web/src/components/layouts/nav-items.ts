import {
  Compass,
  FolderGit2,
  GitBranch,
  LayoutDashboard,
  Rocket,
  Settings,
  UserRound,
  type LucideIcon,
} from 'lucide-react'
import { paths } from '@/config/paths'

export type NavItem = { label: string; to: string; icon: LucideIcon }

/** The sidebar entries of SPEC §2, in order. */
export const navItems: NavItem[] = [
  { label: 'Dashboard', to: paths.dashboard.getHref(), icon: LayoutDashboard },
  { label: 'Discover', to: paths.discover.getHref(), icon: Compass },
  { label: 'Projects', to: paths.projects.getHref(), icon: FolderGit2 },
  { label: 'Deployments', to: paths.deployments.getHref(), icon: Rocket },
  { label: 'GitHub Integration', to: paths.githubIntegration.getHref(), icon: GitBranch },
  { label: 'Profile', to: paths.profile.getHref(), icon: UserRound },
  { label: 'Settings', to: paths.settings.getHref(), icon: Settings },
]

/**
 * isNavActive says whether an entry is highlighted for a path: its own path
 * and anything below it, and any path that begins with /projects or
 * /deployments for those two entries.
 */
export function isNavActive(pathname: string, to: string): boolean {
  if (to === paths.projects.getHref() || to === paths.deployments.getHref()) {
    return pathname.startsWith(to)
  }
  return pathname === to || pathname.startsWith(`${to}/`)
}
