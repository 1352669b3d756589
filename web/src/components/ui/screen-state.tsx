import type { ComponentType, ReactNode } from 'react'
import { cn } from '@/lib/cn'

type ScreenStateProps = {
  icon: ComponentType<{ className?: string; 'aria-hidden'?: boolean | 'true' }>
  title: string
  description?: ReactNode
  action?: ReactNode
  /** `danger` for a failure: a red icon, and the state is announced (role alert). */
  tone?: 'neutral' | 'danger'
}

/**
 * A whole screen saying why its thing is not shown (not found, could not be
 * loaded): the title is the page's h1 and its <title>.
 */
export function ScreenState({ icon: Icon, title, description, action, tone = 'neutral' }: ScreenStateProps) {
  return (
    <div
      role={tone === 'danger' ? 'alert' : undefined}
      className="mt-8 flex flex-col items-center justify-center rounded-xl border border-dashed border-zinc-300 px-6 py-16 text-center dark:border-zinc-700"
    >
      <title>{`${title} · Gantry`}</title>
      <div
        className={cn(
          'mb-4 flex size-12 items-center justify-center rounded-full',
          tone === 'danger'
            ? 'bg-red-50 text-red-600 dark:bg-red-500/15 dark:text-red-400'
            : 'bg-zinc-100 text-zinc-500 dark:bg-zinc-800 dark:text-zinc-400',
        )}
      >
        <Icon className="size-6" aria-hidden="true" />
      </div>
      <h1 className="text-lg font-semibold text-zinc-900 dark:text-zinc-50">{title}</h1>
      {description ? <p className="mt-1 max-w-sm text-sm break-words text-zinc-600 dark:text-zinc-400">{description}</p> : null}
      {action ? <div className="mt-5 flex flex-wrap items-center justify-center gap-3">{action}</div> : null}
    </div>
  )
}
