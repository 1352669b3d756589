import { Globe, Lock } from 'lucide-react'
import { Badge } from '@/components/ui/badge'

/** The private or public marker of a repository (neutral, as GitHub shows it; the icon tells them apart). */
export function RepoPrivacy({ isPrivate }: { isPrivate: boolean }) {
  return isPrivate ? (
    <Badge tone="neutral">
      <Lock className="size-3" aria-hidden="true" />
      Private
    </Badge>
  ) : (
    <Badge tone="neutral">
      <Globe className="size-3" aria-hidden="true" />
      Public
    </Badge>
  )
}
