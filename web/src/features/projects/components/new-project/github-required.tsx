import { Link } from 'react-router'
import { Globe, KeyRound } from 'lucide-react'
import { Button, buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { paths } from '@/config/paths'

/** Shown on the GitHub source when no GitHub account is connected (SPEC §2). */
export function GitHubRequired({ onUsePublic }: { onUsePublic: () => void }) {
  return (
    <Card className="px-6 py-12 text-center">
      <div className="mx-auto flex size-12 items-center justify-center rounded-full bg-indigo-50 text-indigo-600 dark:bg-indigo-500/15 dark:text-indigo-300">
        <KeyRound className="size-6" aria-hidden="true" />
      </div>
      <h2 className="mt-4 text-lg font-semibold text-zinc-900 dark:text-zinc-50">GitHub Account Required</h2>
      <p className="mx-auto mt-2 max-w-md text-sm text-zinc-600 dark:text-zinc-400">
        Connect your GitHub account to pick one of your repositories, or deploy any public repository by its URL.
      </p>
      <div className="mt-6 flex flex-col justify-center gap-2 sm:flex-row">
        <Link to={paths.githubIntegration.getHref()} className={buttonClasses()}>
          Connect GitHub Account
        </Link>
        <Button variant="secondary" onClick={onUsePublic} icon={<Globe className="size-4" aria-hidden="true" />}>
          Deploy Any Public Repository
        </Button>
      </div>
    </Card>
  )
}
