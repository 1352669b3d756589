import { useState } from 'react'
import { RefreshCw, Unlink } from 'lucide-react'
import { Button } from '@/components/ui/button'
import { ConfirmDialog } from '@/components/ui/dialog'
import { PageHeader } from '@/components/ui/page-header'
import { useDisconnectGitHub } from '@/features/github/api/disconnect'
import { useConnectGitHub } from '@/features/github/api/get-auth-url'
import { useRefreshRepos } from '@/features/github/api/refresh-repos'
import { ConnectGitHub } from '@/features/github/components/connect-github'
import { GitHubAccount } from '@/features/github/components/github-account'
import { RepoGrid } from '@/features/github/components/repo-grid'
import { useAuth } from '@/lib/auth'

/**
 * /github-integration (SPEC §2 GitHub integration). Connected: the account,
 * Refresh Repositories, Disconnect GitHub and the repository grid with its
 * detail modal. Not connected: Connect GitHub, which goes to GitHub's
 * authorize page; when the server has no OAuth app, its message is shown
 * in place.
 */
export function GitHubIntegrationRoute() {
  const { user } = useAuth()
  const [notConfigured, setNotConfigured] = useState<string | null>(null)
  const [confirming, setConfirming] = useState(false)
  const connect = useConnectGitHub({ onNotConfigured: setNotConfigured })
  const refresh = useRefreshRepos()
  const disconnect = useDisconnectGitHub({ onSuccess: () => setConfirming(false) })
  const github = user?.github
  const connected = Boolean(github?.connected)

  return (
    <>
      <PageHeader
        title="GitHub Integration"
        description={
          connected
            ? 'Your connected GitHub account and the repositories you can deploy.'
            : 'Connect GitHub to deploy your own repositories.'
        }
        actions={
          connected ? (
            <>
              <Button
                variant="secondary"
                onClick={() => refresh.mutate()}
                loading={refresh.isPending}
                icon={<RefreshCw className="size-4" aria-hidden="true" />}
                className="w-full sm:w-auto"
              >
                Refresh Repositories
              </Button>
              <Button
                variant="secondary"
                onClick={() => setConfirming(true)}
                icon={<Unlink className="size-4" aria-hidden="true" />}
                className="w-full sm:w-auto"
              >
                Disconnect GitHub
              </Button>
            </>
          ) : null
        }
      />
      {connected && github ? (
        <div className="space-y-8">
          <GitHubAccount github={github} />
          <RepoGrid repos={github.repos ?? []} onRefresh={() => refresh.mutate()} refreshing={refresh.isPending} />
        </div>
      ) : (
        <ConnectGitHub onConnect={() => connect.mutate()} connecting={connect.isPending} notConfigured={notConfigured} />
      )}
      <ConfirmDialog
        open={confirming}
        title="Disconnect GitHub?"
        message="Gantry forgets your GitHub access and repository list. Your projects stay, but private repositories cannot be built again until you reconnect."
        confirmLabel="Disconnect GitHub"
        loading={disconnect.isPending}
        onConfirm={() => disconnect.mutate()}
        onCancel={() => setConfirming(false)}
      />
    </>
  )
}
