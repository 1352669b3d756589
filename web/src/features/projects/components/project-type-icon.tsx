import { TypeIcon } from '@/components/ui/type-icon'
import { frameworkName } from '../frameworks'

/** The type's icon on a tinted square, named "<Type> project" with the type as its tooltip. */
export function ProjectTypeIcon({ type, className }: { type: string | undefined; className?: string }) {
  return (
    <TypeIcon
      type={type}
      label={type ? `${frameworkName(type)} project` : 'Project'}
      title={type ? frameworkName(type) : undefined}
      className={className}
    />
  )
}
