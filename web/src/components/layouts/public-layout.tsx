import { useEffect, useId, useState, type ReactNode } from 'react'
import { Link, NavLink, useLocation } from 'react-router'
import { Menu, X } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { Logo } from '@/components/ui/logo'
import { ThemeToggle } from '@/components/ui/theme-toggle'
import { paths } from '@/config/paths'
import { cn } from '@/lib/cn'
import { PublicFooter } from './footer'

/** The frame of the screens a visitor sees: header, content, footer. */
export function PublicLayout({ children }: { children: ReactNode }) {
  const [menuOpen, setMenuOpen] = useState(false)
  const menuId = useId()
  const location = useLocation()

  // Close the mobile menu on navigation and on Escape.
  useEffect(() => {
    setMenuOpen(false)
  }, [location.pathname])
  useEffect(() => {
    if (!menuOpen) return
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setMenuOpen(false)
    }
    document.addEventListener('keydown', onKeyDown)
    return () => document.removeEventListener('keydown', onKeyDown)
  }, [menuOpen])

  return (
    <div className="flex min-h-dvh flex-col">
      <a
        href="#main"
        className="sr-only z-50 rounded-md bg-white px-3 py-2 text-sm font-medium focus:not-sr-only focus:fixed focus:left-4 focus:top-4 dark:bg-zinc-900"
      >
        Skip to content
      </a>
      <header className="sticky top-0 z-40 border-b border-zinc-200/80 bg-white/80 backdrop-blur-md dark:border-zinc-800/80 dark:bg-zinc-950/80">
        <div className="mx-auto flex h-16 max-w-6xl items-center justify-between gap-4 px-4 sm:px-6">
          <Link to={paths.home.getHref()} className="rounded-md" aria-label="Gantry home">
            <Logo />
          </Link>
          <nav aria-label="Main" className="hidden items-center gap-1 md:flex">
            <NavLink
              to={paths.discover.getHref()}
              className={({ isActive }) =>
                buttonClasses({
                  variant: 'none',
                  size: 'sm',
                  className: isActive
                    ? 'bg-zinc-100 text-zinc-900 dark:bg-zinc-800 dark:text-zinc-50'
                    : 'text-zinc-700 hover:bg-zinc-100 hover:text-zinc-900 dark:text-zinc-300 dark:hover:bg-zinc-800 dark:hover:text-zinc-50',
                })
              }
            >
              Discover Apps
            </NavLink>
            <NavLink to={paths.login.getHref()} className={buttonClasses({ variant: 'ghost', size: 'sm' })}>
              Sign In
            </NavLink>
            <Link to={paths.register.getHref()} className={buttonClasses({ variant: 'primary', size: 'sm' })}>
              Get Started
            </Link>
            <ThemeToggle className="ml-1" />
          </nav>
          <div className="flex items-center gap-1 md:hidden">
            <ThemeToggle />
            <button
              type="button"
              onClick={() => setMenuOpen((o) => !o)}
              aria-expanded={menuOpen}
              aria-controls={menuId}
              aria-label={menuOpen ? 'Close menu' : 'Open menu'}
              className="inline-flex size-9 items-center justify-center rounded-lg text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800"
            >
              {menuOpen ? <X className="size-5" aria-hidden="true" /> : <Menu className="size-5" aria-hidden="true" />}
            </button>
          </div>
        </div>
        <nav
          id={menuId}
          aria-label="Mobile"
          hidden={!menuOpen}
          className={cn(
            'border-t border-zinc-200 px-4 pb-4 pt-2 md:hidden dark:border-zinc-800',
            menuOpen && 'motion-safe:animate-fade-in',
          )}
        >
          <ul className="flex flex-col gap-1">
            <li>
              <Link to={paths.discover.getHref()} className={buttonClasses({ variant: 'ghost', className: 'w-full justify-start' })}>
                Discover Apps
              </Link>
            </li>
            <li>
              <Link to={paths.login.getHref()} className={buttonClasses({ variant: 'ghost', className: 'w-full justify-start' })}>
                Sign In
              </Link>
            </li>
            <li className="pt-2">
              <Link to={paths.register.getHref()} className={buttonClasses({ variant: 'primary', className: 'w-full' })}>
                Get Started
              </Link>
            </li>
          </ul>
        </nav>
      </header>
      <main id="main" className="flex-1">
        {children}
      </main>
      <PublicFooter />
    </div>
  )
}
