import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react'
import { Link, useLocation, useNavigate } from 'react-router'
import { Menu, X } from 'lucide-react'
import toast from 'react-hot-toast'
import { Logo } from '@/components/ui/logo'
import { ThemeToggle } from '@/components/ui/theme-toggle'
import { paths } from '@/config/paths'
import { useAuth } from '@/lib/auth'
import { useFocusTrap, useScrollLock } from '@/lib/use-focus-trap'
import { AppFooter } from './footer'
import { SidebarContent } from './sidebar'
import { UserMenu } from './user-menu'

type AppLayoutProps = {
  children: ReactNode
  /** The notification bell, supplied by the app so layouts stay feature-free. */
  notifications?: ReactNode
  /** The storage usage shown on the sidebar's plan card, supplied the same way. */
  planUsage?: ReactNode
}

/** The frame of the logged-in screens: sidebar, top bar, content, footer. */
export function AppLayout({ children, notifications, planUsage }: AppLayoutProps) {
  const { user, signOut } = useAuth()
  const navigate = useNavigate()
  const location = useLocation()
  const [drawerOpen, setDrawerOpen] = useState(false)
  const drawer = useRef<HTMLDivElement>(null)
  const closeDrawer = useCallback(() => setDrawerOpen(false), [])
  useFocusTrap(drawer, drawerOpen, closeDrawer)
  useScrollLock(drawerOpen)

  useEffect(() => {
    setDrawerOpen(false)
  }, [location.pathname])

  const onSignOut = useCallback(async () => {
    await signOut()
    toast.success('Logged out successfully')
    navigate(paths.home.getHref(), { replace: true })
  }, [signOut, navigate])

  if (!user) return null

  return (
    <div className="flex min-h-dvh">
      <a
        href="#main"
        className="sr-only z-50 rounded-md bg-white px-3 py-2 text-sm font-medium focus:not-sr-only focus:fixed focus:left-4 focus:top-4 dark:bg-zinc-900"
      >
        Skip to content
      </a>

      {/* Desktop sidebar: a full-height column whose content stays in view. */}
      <aside className="hidden w-64 shrink-0 border-r border-zinc-200 bg-white lg:block dark:border-zinc-800 dark:bg-zinc-950">
        <div className="sticky top-0 h-dvh">
          <SidebarContent user={user} planUsage={planUsage} />
        </div>
      </aside>

      {/* Phone and tablet sidebar */}
      {drawerOpen ? (
        <div className="fixed inset-0 z-50 lg:hidden">
          <div
            className="fixed inset-0 bg-zinc-950/50 backdrop-blur-[2px] motion-safe:animate-fade-in"
            aria-hidden="true"
            onClick={closeDrawer}
          />
          <div
            ref={drawer}
            role="dialog"
            aria-modal="true"
            aria-label="Navigation"
            className="fixed inset-y-0 left-0 flex w-72 max-w-[85vw] flex-col bg-white shadow-xl motion-safe:animate-slide-in dark:bg-zinc-950 dark:ring-1 dark:ring-zinc-800"
          >
            <button
              type="button"
              onClick={closeDrawer}
              aria-label="Close navigation"
              className="absolute right-3 top-3.5 z-10 inline-flex size-9 items-center justify-center rounded-lg text-zinc-500 hover:bg-zinc-100 hover:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-50"
            >
              <X className="size-5" aria-hidden="true" />
            </button>
            <SidebarContent user={user} onNavigate={closeDrawer} planUsage={planUsage} />
          </div>
        </div>
      ) : null}

      <div className="flex min-h-dvh min-w-0 flex-1 flex-col">
        <header className="sticky top-0 z-20 border-b border-zinc-200/80 bg-white/80 backdrop-blur-md dark:border-zinc-800/80 dark:bg-zinc-950/80">
          <div className="flex h-16 items-center gap-2 px-4 sm:px-6 lg:px-8">
            <button
              type="button"
              onClick={() => setDrawerOpen(true)}
              aria-label="Open navigation"
              aria-expanded={drawerOpen}
              className="-ml-1.5 inline-flex size-9 items-center justify-center rounded-lg text-zinc-700 hover:bg-zinc-100 lg:hidden dark:text-zinc-300 dark:hover:bg-zinc-800"
            >
              <Menu className="size-5" aria-hidden="true" />
            </button>
            <Link to={paths.dashboard.getHref()} className="rounded-md lg:hidden" aria-label="Gantry dashboard">
              <Logo showWord={false} />
            </Link>
            <div className="flex-1" />
            <ThemeToggle />
            {notifications}
            <div className="ml-1">
              <UserMenu user={user} onSignOut={onSignOut} />
            </div>
          </div>
        </header>
        <main id="main" className="mx-auto w-full max-w-6xl flex-1 px-4 py-8 sm:px-6 lg:px-8">
          {children}
        </main>
        <AppFooter />
      </div>
    </div>
  )
}
