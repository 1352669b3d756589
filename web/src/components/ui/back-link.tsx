import type { ReactNode } from 'react'
import { Link } from 'react-router'
import { ArrowLeft } from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'

type BackLinkProps = {
  to: string
  children: ReactNode
  /** `text` above a page's header (the default); `button` as a not-found state's action. */
  variant?: 'text' | 'button'
}

/** "← Back to …": the way back from a detail screen to its list. */
export function BackLink({ to, children, variant = 'text' }: BackLinkProps) {
  return (
    <Link
      to={to}
      className={
        variant === 'button'
          ? buttonClasses({ variant: 'secondary' })
          : 'mb-4 inline-flex items-center gap-1.5 rounded text-sm text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100'
      }
    >
      <ArrowLeft className="size-4" aria-hidden="true" />
      {children}
    </Link>
  )
}
