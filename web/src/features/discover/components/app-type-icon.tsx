import { TypeIcon, typeIconLabel } from '@/components/ui/type-icon'

/** The display name of a project type: "nextjs" → "Next.js"; unknown types are capitalised. */
export function appTypeLabel(type: string | undefined): string {
  if (!type) return 'App'
  return typeIconLabel(type) ?? type.charAt(0).toUpperCase() + type.slice(1)
}

/** The type's icon on a tinted square, named "<Type> app"; unknown types get a repository icon. */
export function AppTypeIcon({ type, className }: { type: string | undefined; className?: string }) {
  return <TypeIcon type={type} label={`${appTypeLabel(type)} app`} className={className} />
}
