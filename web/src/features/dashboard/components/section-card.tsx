import type { ReactNode } from 'react'
import { Card } from '@/components/ui/card'

/** A dashboard section: a card with a title, its actions and a body. */
export function SectionCard({ id, title, actions, children }: { id: string; title: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <Card className="flex min-w-0 flex-col" role="region" aria-labelledby={id}>
      <div className="flex items-center justify-between gap-3 border-b border-zinc-200 px-5 py-3.5 dark:border-zinc-800">
        <h2 id={id} className="text-base font-semibold text-zinc-900 dark:text-zinc-50">
          {title}
        </h2>
        {actions ? <div className="flex items-center gap-1">{actions}</div> : null}
      </div>
      <div className="flex-1">{children}</div>
    </Card>
  )
}

/** Rows of grey blocks shaped like the list that is loading. */
export function RowsSkeleton({ rows = 3, render }: { rows?: number; render: () => ReactNode }) {
  return (
    <ul aria-hidden="true" className="divide-y divide-zinc-100 dark:divide-zinc-800">
      {Array.from({ length: rows }, (_, i) => (
        <li key={i} className="flex items-center gap-3 px-5 py-3.5">
          {render()}
        </li>
      ))}
    </ul>
  )
}
