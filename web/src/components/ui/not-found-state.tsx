import type { ComponentType, ReactNode } from 'react'

type NotFoundStateProps = {
  icon: ComponentType<{ className?: string; 'aria-hidden'?: boolean | 'true' }>
  title: string
  description?: ReactNode
  action?: ReactNode
}

/** A whole screen saying its thing is not there: the title is the page's h1. */
export function NotFoundState({ icon: Icon, title, description, action }: NotFoundStateProps) {
  return (
    <div className="mt-8 flex flex-col items-center justify-center rounded-xl border border-dashed border-zinc-300 px-6 py-16 text-center dark:border-zinc-700">
      <title>{`${title} · Gantry`}</title>
      <div className="mb-4 flex size-12 items-center justify-center rounded-full bg-zinc-100 text-zinc-500 dark:bg-zinc-800 dark:text-zinc-400">
        <Icon className="size-6" aria-hidden="true" />
      </div>
      <h1 className="text-lg font-semibold text-zinc-900 dark:text-zinc-50">{title}</h1>
      {description ? <p className="mt-1 max-w-sm text-sm text-zinc-600 dark:text-zinc-400">{description}</p> : null}
      {action ? <div className="mt-5">{action}</div> : null}
    </div>
  )
}
