import type { HTMLAttributes } from 'react'
import { cn } from '@/lib/cn'

/**
 * Badge tones. Status colours are the same everywhere (STYLE.md): success for
 * Live, warning for Building/Deploying, info for Pending, danger for Failed,
 * neutral for Draft/Stopped.
 */
export type BadgeTone = 'neutral' | 'accent' | 'success' | 'warning' | 'info' | 'danger'

const tones: Record<BadgeTone, string> = {
  neutral: 'bg-zinc-100 text-zinc-700 ring-zinc-500/20 dark:bg-zinc-800 dark:text-zinc-300 dark:ring-zinc-400/20',
  accent: 'bg-indigo-50 text-indigo-700 ring-indigo-600/20 dark:bg-indigo-500/15 dark:text-indigo-300 dark:ring-indigo-400/30',
  success: 'bg-emerald-50 text-emerald-700 ring-emerald-600/20 dark:bg-emerald-500/15 dark:text-emerald-300 dark:ring-emerald-400/30',
  warning: 'bg-amber-50 text-amber-800 ring-amber-600/25 dark:bg-amber-500/15 dark:text-amber-300 dark:ring-amber-400/30',
  info: 'bg-sky-50 text-sky-700 ring-sky-600/20 dark:bg-sky-500/15 dark:text-sky-300 dark:ring-sky-400/30',
  danger: 'bg-red-50 text-red-700 ring-red-600/20 dark:bg-red-500/15 dark:text-red-300 dark:ring-red-400/30',
}

const dots: Record<BadgeTone, string> = {
  neutral: 'bg-zinc-400',
  accent: 'bg-indigo-500',
  success: 'bg-emerald-500',
  warning: 'bg-amber-500',
  info: 'bg-sky-500',
  danger: 'bg-red-500',
}

type BadgeProps = HTMLAttributes<HTMLSpanElement> & {
  tone?: BadgeTone
  /** Shows a status dot; `pulse` animates it (building, deploying). */
  dot?: boolean
  pulse?: boolean
}

export function Badge({ tone = 'neutral', dot, pulse, className, children, ...props }: BadgeProps) {
  return (
    <span
      className={cn(
        'inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset',
        tones[tone],
        className,
      )}
      {...props}
    >
      {dot ? (
        <span className="relative flex size-1.5" aria-hidden="true">
          {pulse ? (
            <span
              className={cn(
                'absolute inline-flex size-full rounded-full opacity-75 motion-safe:animate-ping',
                dots[tone],
              )}
            />
          ) : null}
          <span className={cn('relative inline-flex size-1.5 rounded-full', dots[tone])} />
        </span>
      ) : null}
      {children}
    </span>
  )
}
