import type { ReactNode } from 'react'
import { Link, useLocation } from 'react-router'
import { Sparkles } from 'lucide-react'
import { Avatar } from '@/components/ui/avatar'
import { Badge } from '@/components/ui/badge'
import { Logo } from '@/components/ui/logo'
import { paths } from '@/config/paths'
import { cn } from '@/lib/cn'
import type { User } from '@/types/api'
import { capitalize } from '@/utils/format'
import { planLabel, planLimitsLabel, roleOf } from '@/utils/user'
import { isNavActive, navItems } from './nav-items'

type SidebarProps = {
  user: User
  onNavigate?: () => void
  /** Shown under the plan's limits: the storage usage, supplied by the app. */
  planUsage?: ReactNode
}

/** The navigation column: logo, entries, the user and their plan. */
export function SidebarContent({ user, onNavigate, planUsage }: SidebarProps) {
  const { pathname } = useLocation()
  return (
    <div className="flex h-full flex-col">
      <div className="flex h-16 shrink-0 items-center px-5">
        <Link to={paths.dashboard.getHref()} onClick={onNavigate} className="rounded-md" aria-label="Gantry dashboard">
          <Logo />
        </Link>
      </div>
      <nav aria-label="Main" className="flex-1 overflow-y-auto px-3 py-2">
        <ul className="space-y-0.5">
          {navItems.map((item) => {
            const active = isNavActive(pathname, item.to)
            const Icon = item.icon
            return (
              <li key={item.to}>
                <Link
                  to={item.to}
                  onClick={onNavigate}
                  aria-current={active ? 'page' : undefined}
                  className={cn(
                    'group flex items-center gap-3 rounded-lg px-3 py-2 text-sm font-medium transition-colors',
                    active
                      ? 'bg-zinc-100 text-zinc-900 dark:bg-zinc-800/80 dark:text-zinc-50'
                      : 'text-zinc-600 hover:bg-zinc-100/70 hover:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800/50 dark:hover:text-zinc-50',
                  )}
                >
                  <Icon
                    className={cn(
                      'size-4.5 shrink-0',
                      active
                        ? 'text-indigo-600 dark:text-indigo-400'
                        : 'text-zinc-400 group-hover:text-zinc-600 dark:text-zinc-500 dark:group-hover:text-zinc-300',
                    )}
                    aria-hidden="true"
                  />
                  {item.label}
                </Link>
              </li>
            )
          })}
        </ul>
      </nav>
      <div className="space-y-3 border-t border-zinc-200 p-4 dark:border-zinc-800">
        <div className="rounded-lg border border-zinc-200 bg-zinc-50 p-3 dark:border-zinc-800 dark:bg-zinc-900">
          <div className="flex items-center gap-2 text-sm font-medium text-zinc-900 dark:text-zinc-100">
            <Sparkles className="size-4 text-indigo-600 dark:text-indigo-400" aria-hidden="true" />
            {planLabel(user)} plan
          </div>
          <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">{planLimitsLabel(user)}</p>
          {planUsage}
        </div>
        <div className="flex items-center gap-3">
          <Avatar src={user.avatar || undefined} name={user.fullName} username={user.username} />
          <div className="min-w-0">
            <p className="truncate text-sm font-medium text-zinc-900 dark:text-zinc-50">
              {user.fullName || user.username}
            </p>
            <Badge tone="accent" className="mt-0.5">
              {capitalize(roleOf(user))}
            </Badge>
          </div>
        </div>
      </div>
    </div>
  )
}
