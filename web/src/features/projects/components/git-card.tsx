import { useEffect, useState } from 'react'
import { Check, Copy, GitBranch, GitPullRequest, RefreshCw, Webhook } from 'lucide-react'
import toast from 'react-hot-toast'
import { Badge, type BadgeTone } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { ConfirmDialog } from '@/components/ui/dialog'
import { Input } from '@/components/ui/input'
import { Skeleton } from '@/components/ui/skeleton'
import { Switch } from '@/components/ui/switch'
import { formatRelativeTime } from '@/utils/format'
import { useApprovePullRequest } from '../api/approve-pull-request'
import { useProjectGitHub } from '../api/get-github'
import { useReconnectWebhook } from '../api/reconnect-webhook'
import { useRotateDeployHook } from '../api/rotate-deploy-hook'
import { useUpdateGitSettings } from '../api/update-project'
import type { Project, ProjectGitHub, WebhookStatus } from '../types'

export const ROTATE_HOOK_TITLE = 'Rotate the deploy hook?'
export const ROTATE_HOOK_MESSAGE =
  'A new URL replaces this one. The old URL stops working at once: update every service that calls it.'

/** How long "Copied" shows after a copy. */
const COPIED_MS = 2000

/** The webhook's state in one word and tone. */
export function webhookState(webhook: WebhookStatus | null): { label: string; tone: BadgeTone } {
  if (!webhook) return { label: 'Missing', tone: 'danger' }
  if (webhook.error) return { label: 'Error', tone: 'danger' }
  if (!webhook.active) return { label: 'Inactive', tone: 'warning' }
  return { label: 'Active', tone: 'success' }
}

const deliveryTone: Record<string, BadgeTone> = { ok: 'success', ignored: 'neutral', failed: 'danger' }
const deliveryLabel: Record<string, string> = { ok: 'Delivered', ignored: 'Ignored', failed: 'Failed' }

/**
 * The Git card of the project detail screen: the production branch, the
 * Auto-deploy and "Watch for new commits" switches, the deploy hook URL
 * (copy, rotate) and, for GitHub, the webhook's last delivery and the pull
 * requests from forks that wait for the owner's approval.
 */
export function GitCard({ project }: { project: Project }) {
  const settings = useUpdateGitSettings(project._id)
  const github = useProjectGitHub(project._id)
  // A project created from the connected GitHub account always has a webhook record (with
  // the reason when GitHub refused it); any other repository, a public GitHub one added by
  // its URL included, has none and gets the commit watcher instead.
  const onGitHub = Boolean(github.data?.webhook)
  const autoDeploy = settings.isPending && settings.variables.autoDeploy !== undefined
    ? settings.variables.autoDeploy
    : project.autoDeploy !== false
  const watch = settings.isPending && settings.variables.watchCommits !== undefined
    ? settings.variables.watchCommits
    : Boolean(project.watchCommits)
  const branch = project.branch || project.repository?.defaultBranch || 'main'
  return (
    <Card data-testid="git-card">
      <CardHeader>
        <CardTitle className="flex items-center gap-2">
          <GitBranch className="size-4 text-zinc-400" aria-hidden="true" />
          Git
        </CardTitle>
      </CardHeader>
      <CardContent className="space-y-5">
        <p className="flex flex-wrap items-center gap-x-2 text-sm text-zinc-600 dark:text-zinc-400">
          Production branch
          <span className="rounded-md bg-zinc-100 px-1.5 py-0.5 font-mono text-[0.8125rem] text-zinc-900 dark:bg-zinc-800 dark:text-zinc-100">
            {branch}
          </span>
        </p>
        <div className="space-y-4">
          <Switch
            label="Auto-deploy"
            hint={`Pushes to ${branch} go live, other branches get previews, and the deploy hook works. Off: only Deploy does.`}
            checked={autoDeploy}
            disabled={settings.isPending}
            onChange={(on) => settings.mutate({ autoDeploy: on })}
          />
          {!onGitHub && !github.isPending ? (
            <Switch
              label="Watch for new commits"
              hint="Checks the branch every minute and deploys new commits (public repositories)."
              checked={watch}
              disabled={settings.isPending || !autoDeploy}
              onChange={(on) => settings.mutate({ watchCommits: on })}
            />
          ) : null}
        </div>
        <DeployHookField projectId={project._id} url={project.deployHookUrl} />
        {github.isPending ? (
          <Skeleton className="h-16" />
        ) : onGitHub ? (
          <GitHubSection projectId={project._id} data={github.data ?? null} />
        ) : null}
      </CardContent>
    </Card>
  )
}

function DeployHookField({ projectId, url }: { projectId: string; url: string | undefined }) {
  const [copied, setCopied] = useState(false)
  const [confirming, setConfirming] = useState(false)
  const rotate = useRotateDeployHook(projectId, { onSettled: () => setConfirming(false) })
  useEffect(() => {
    if (!copied) return
    const t = setTimeout(() => setCopied(false), COPIED_MS)
    return () => clearTimeout(t)
  }, [copied])

  const copy = async () => {
    if (!url) return
    try {
      await navigator.clipboard.writeText(url)
      setCopied(true)
    } catch {
      toast.error('Could not copy: select the URL and copy it yourself')
    }
  }

  return (
    <div>
      <Input
        label="Deploy hook"
        value={url ?? ''}
        readOnly
        placeholder="Not available yet"
        onFocus={(e) => e.currentTarget.select()}
        hint={
          <>
            A POST to this URL deploys the production branch; add <code className="font-mono text-xs whitespace-nowrap">?branch=name</code>{' '}
            to deploy another branch as a preview. Keep it secret.
          </>
        }
        className="[&_input]:font-mono [&_input]:text-xs"
        spellCheck={false}
      />
      <div className="mt-2 flex flex-wrap gap-2">
        <Button
          variant="secondary"
          size="sm"
          disabled={!url}
          onClick={() => void copy()}
          icon={copied ? <Check className="size-4 text-emerald-500" aria-hidden="true" /> : <Copy className="size-4" aria-hidden="true" />}
        >
          {copied ? 'Copied' : 'Copy'}
        </Button>
        <Button
          variant="ghost"
          size="sm"
          loading={rotate.isPending}
          onClick={() => setConfirming(true)}
          icon={<RefreshCw className="size-4" aria-hidden="true" />}
        >
          Rotate
        </Button>
      </div>
      <ConfirmDialog
        open={confirming}
        title={ROTATE_HOOK_TITLE}
        message={ROTATE_HOOK_MESSAGE}
        confirmLabel={rotate.isPending ? 'Rotating...' : 'Rotate'}
        loading={rotate.isPending}
        onConfirm={() => rotate.mutate()}
        onCancel={() => setConfirming(false)}
      />
    </div>
  )
}

/** The first 7 characters of a commit hash, as GitHub shows it. */
export function shortSha(sha: string): string {
  return sha.slice(0, 7)
}

/** Says exactly which variables a fork's build gets. */
function ForkVariables({ names }: { names: string[] }) {
  if (names.length === 0) {
    return <>A fork&apos;s build gets no variables: none is scoped to Preview.</>
  }
  return (
    <>
      A fork&apos;s build gets only the variables scoped to Preview:{' '}
      {names.map((n, i) => (
        <span key={n}>
          {i > 0 ? ', ' : ''}
          <code className="font-mono text-zinc-700 dark:text-zinc-300">{n}</code>
        </span>
      ))}
      .
    </>
  )
}

function GitHubSection({ projectId, data }: { projectId: string; data: ProjectGitHub | null }) {
  const reconnect = useReconnectWebhook(projectId)
  const approve = useApprovePullRequest(projectId)
  const webhook = data?.webhook ?? null
  const state = webhookState(webhook)
  const delivery = webhook?.lastDelivery
  const waiting = (data?.pullRequests ?? []).filter((pr) => pr.state === 'awaiting_approval')
  return (
    <div className="space-y-4 border-t border-zinc-100 pt-4 dark:border-zinc-800">
      <div>
        <div className="flex flex-wrap items-center justify-between gap-2">
          <p className="flex items-center gap-2 text-sm font-medium text-zinc-900 dark:text-zinc-100">
            <Webhook className="size-4 text-zinc-400" aria-hidden="true" />
            GitHub webhook
            <Badge tone={state.tone} dot data-testid="webhook-state">
              {state.label}
            </Badge>
          </p>
          {!webhook || !webhook.active || webhook.error ? (
            <Button
              variant="secondary"
              size="sm"
              loading={reconnect.isPending}
              onClick={() => reconnect.mutate()}
            >
              {reconnect.isPending ? 'Reconnecting...' : 'Reconnect webhook'}
            </Button>
          ) : null}
        </div>
        {webhook?.error ? (
          <p className="mt-1 text-sm text-red-600 dark:text-red-400">{webhook.error}</p>
        ) : !webhook ? (
          <p className="mt-1 text-sm text-zinc-500 dark:text-zinc-400">
            GitHub does not tell Gantry about pushes: reconnect the webhook.
          </p>
        ) : null}
        {delivery ? (
          <div className="mt-2 rounded-lg bg-zinc-50 px-3 py-2 text-xs dark:bg-zinc-950/50" data-testid="last-delivery">
            <p className="flex flex-wrap items-center gap-x-2 gap-y-1 text-zinc-600 dark:text-zinc-400">
              <span>Last delivery</span>
              <span className="font-mono text-zinc-900 dark:text-zinc-100">
                {delivery.event}
                {delivery.action ? `.${delivery.action}` : ''}
              </span>
              <Badge tone={deliveryTone[delivery.result] ?? 'neutral'}>
                {deliveryLabel[delivery.result] ?? delivery.result}
              </Badge>
              <span>{formatRelativeTime(delivery.at)}</span>
            </p>
            {delivery.message ? (
              <p className="mt-1 break-words text-zinc-700 dark:text-zinc-300">{delivery.message}</p>
            ) : null}
          </div>
        ) : webhook ? (
          <p className="mt-1 text-sm text-zinc-500 dark:text-zinc-400">No delivery yet.</p>
        ) : null}
      </div>
      {waiting.length > 0 ? (
        <div>
          <p className="text-sm font-medium text-zinc-900 dark:text-zinc-100">Pull requests from forks awaiting approval</p>
          <p className="mt-0.5 text-xs text-zinc-500 dark:text-zinc-400" data-testid="fork-variables">
            <ForkVariables names={data?.forkVariables ?? []} /> Approving builds the commit shown, not later pushes:
            review its changes first.
          </p>
          <ul className="mt-2 space-y-2" aria-label="Pull requests awaiting approval">
            {waiting.map((pr) => (
              <li
                key={pr.number}
                className="flex flex-wrap items-center justify-between gap-2 rounded-lg border border-amber-200 bg-amber-50/60 px-3 py-2 dark:border-amber-400/20 dark:bg-amber-500/5"
              >
                <div className="flex min-w-0 items-start gap-2">
                  <GitPullRequest className="mt-0.5 size-4 shrink-0 text-amber-600 dark:text-amber-400" aria-hidden="true" />
                  <div className="min-w-0">
                    <a
                      href={pr.url}
                      target="_blank"
                      rel="noopener noreferrer"
                      className="rounded text-sm font-medium break-words text-zinc-900 hover:underline dark:text-zinc-100"
                    >
                      #{pr.number} {pr.title}
                    </a>
                    <p className="text-xs text-zinc-600 dark:text-zinc-400">
                      by {pr.author} · <span className="font-mono">{pr.headBranch}</span> · commit{' '}
                      <span className="font-mono text-zinc-900 dark:text-zinc-100" title={pr.headSha}>
                        {shortSha(pr.headSha)}
                      </span>{' '}
                      ·{' '}
                      <a
                        href={pr.diffUrl || pr.url}
                        target="_blank"
                        rel="noopener noreferrer"
                        className="rounded font-medium whitespace-nowrap text-zinc-900 underline decoration-zinc-300 underline-offset-2 hover:decoration-zinc-500 dark:text-zinc-100 dark:decoration-zinc-600"
                      >
                        Review changes
                      </a>
                    </p>
                  </div>
                </div>
                <Button
                  size="sm"
                  loading={approve.isPending && approve.variables?.number === pr.number}
                  disabled={approve.isPending || !pr.headSha}
                  onClick={() => approve.mutate({ number: pr.number, sha: pr.headSha })}
                >
                  Approve {shortSha(pr.headSha)} and build
                </Button>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  )
}
