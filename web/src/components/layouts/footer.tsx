import { Link } from 'react-router'
import { Logo } from '@/components/ui/logo'
import { AGENCY_CREDIT } from '@/config/constants'
import { paths } from '@/config/paths'
import { cn } from '@/lib/cn'

function Credits({ className }: { className?: string }) {
  return (
    <div
      className={cn(
        'flex flex-col gap-1 text-sm text-zinc-500 sm:flex-row sm:items-center sm:justify-between dark:text-zinc-400',
        className,
      )}
    >
      <p>© {new Date().getFullYear()} Gantry. All rights reserved.</p>
      <p>
        Designed and built by <span className="font-medium text-zinc-700 dark:text-zinc-300">{AGENCY_CREDIT.name}</span>
      </p>
    </div>
  )
}

/** The footer of the logged-in screens: a copyright line and the agency credit. */
export function AppFooter() {
  return (
    <footer className="border-t border-zinc-200 px-4 py-5 sm:px-6 lg:px-8 dark:border-zinc-800">
      <Credits />
    </footer>
  )
}

const footerLink =
  'rounded text-sm text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-50'

/** The footer of the public screens. */
export function PublicFooter() {
  return (
    <footer className="border-t border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-950">
      <div className="mx-auto max-w-6xl px-4 py-10 sm:px-6">
        <div className="flex flex-col gap-8 sm:flex-row sm:items-start sm:justify-between">
          <div className="max-w-xs">
            <Logo />
            <p className="mt-3 text-sm text-zinc-600 dark:text-zinc-400">
              Deploy student and hobby web projects from git to a live URL in minutes.
            </p>
          </div>
          <nav aria-label="Footer" className="flex gap-12">
            <div>
              <h2 className="text-sm font-semibold text-zinc-900 dark:text-zinc-50">Product</h2>
              <ul className="mt-3 space-y-2">
                <li>
                  <Link to={paths.discover.getHref()} className={footerLink}>
                    Discover Apps
                  </Link>
                </li>
                <li>
                  <Link to={paths.register.getHref()} className={footerLink}>
                    Get Started
                  </Link>
                </li>
              </ul>
            </div>
            <div>
              <h2 className="text-sm font-semibold text-zinc-900 dark:text-zinc-50">Account</h2>
              <ul className="mt-3 space-y-2">
                <li>
                  <Link to={paths.login.getHref()} className={footerLink}>
                    Sign In
                  </Link>
                </li>
                <li>
                  <Link to={paths.register.getHref()} className={footerLink}>
                    Create account
                  </Link>
                </li>
              </ul>
            </div>
          </nav>
        </div>
        <Credits className="mt-10 border-t border-zinc-200 pt-6 dark:border-zinc-800" />
      </div>
    </footer>
  )
}
