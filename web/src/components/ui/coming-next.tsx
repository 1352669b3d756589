import type { ComponentType, ReactNode } from 'react'
import { EmptyState } from './empty-state'

type ComingNextProps = {
  icon: ComponentType<{ className?: string }>
  /** One sentence saying what this screen will do. */
  description: ReactNode
  action?: ReactNode
}

/** The body of a screen whose route exists but whose content comes next. */
export function ComingNext({ icon, description, action }: ComingNextProps) {
  return <EmptyState icon={icon} title="Coming next" description={description} action={action} />
}
