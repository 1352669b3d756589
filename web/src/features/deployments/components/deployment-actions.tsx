import { useState } from 'react'
import { ExternalLink, Play, Square, Trash2 } from 'lucide-react'
import { Button, buttonClasses } from '@/components/ui/button'
import { ConfirmDialog } from '@/components/ui/dialog'
import { useDeleteDeployment, useRestartDeployment, useStopDeployment } from '../api/hosting'
import { canRestart, canStop, canVisit } from '../status'
import type { Deployment } from '../types'

export const DELETE_DEPLOYMENT_CONFIRMATION =
  'Are you sure you want to delete this deployment? This action cannot be undone and will remove all deployment data, files, and the application link.'

type DeploymentActionsProps = {
  deployment: Pick<Deployment, '_id' | 'subdomain' | 'status' | 'url' | 'prunedAt'>
  /** Called after a successful delete. */
  onDeleted?: () => void
  size?: 'sm' | 'md'
}

/**
 * Visit Site (live), Stop (live, building, deploying), Restart (stopped,
 * unless its files were removed to save space: the server refuses that) and
 * Delete (always; it tries a stop first), as SPEC §2 and §4 allow.
 */
export function DeploymentActions({ deployment, onDeleted, size = 'sm' }: DeploymentActionsProps) {
  const [confirming, setConfirming] = useState(false)
  const stop = useStopDeployment()
  const restart = useRestartDeployment()
  const remove = useDeleteDeployment({
    onSuccess: () => {
      setConfirming(false)
      onDeleted?.()
    },
  })
  const busy = stop.isPending || restart.isPending || remove.isPending
  return (
    <>
      {canVisit(deployment) ? (
        <a
          href={deployment.url}
          target="_blank"
          rel="noopener noreferrer"
          className={buttonClasses({ variant: 'secondary', size })}
        >
          <ExternalLink className="size-4" aria-hidden="true" />
          Visit Site
        </a>
      ) : null}
      {canStop(deployment.status) ? (
        <Button
          variant="secondary"
          size={size}
          loading={stop.isPending}
          disabled={busy}
          onClick={() => stop.mutate(deployment)}
          icon={<Square className="size-4" aria-hidden="true" />}
        >
          Stop
        </Button>
      ) : null}
      {canRestart(deployment.status) && !deployment.prunedAt ? (
        <Button
          variant="secondary"
          size={size}
          loading={restart.isPending}
          disabled={busy}
          onClick={() => restart.mutate(deployment)}
          icon={<Play className="size-4" aria-hidden="true" />}
        >
          Restart
        </Button>
      ) : null}
      <Button
        variant="ghost"
        size={size}
        disabled={busy}
        onClick={() => setConfirming(true)}
        className="text-red-600 hover:bg-red-50 hover:text-red-700 dark:text-red-400 dark:hover:bg-red-500/10 dark:hover:text-red-300"
        icon={<Trash2 className="size-4" aria-hidden="true" />}
      >
        Delete
      </Button>
      <ConfirmDialog
        open={confirming}
        title="Delete deployment"
        message={DELETE_DEPLOYMENT_CONFIRMATION}
        confirmLabel="Delete"
        loading={remove.isPending}
        onConfirm={() => remove.mutate(deployment)}
        onCancel={() => setConfirming(false)}
      />
    </>
  )
}
