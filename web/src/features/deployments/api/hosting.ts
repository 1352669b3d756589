// Stop, restart and delete. Several deployments of a project share its
// subdomain, so stop and restart always say which one is meant.
import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api } from '@/lib/api-client'
import { sharedKeys } from '@/lib/query-keys'
import type { Deployment } from '../types'
import { deploymentKeys } from './keys'

type Target = Pick<Deployment, '_id' | 'subdomain'>

export async function stopDeployment(d: Target): Promise<void> {
  await api.post(`/api/deployments/hosting/stop/${encodeURIComponent(d.subdomain)}`, { deploymentId: d._id })
}

export async function restartDeployment(d: Target): Promise<void> {
  await api.post(`/api/deployments/hosting/restart/${encodeURIComponent(d.subdomain)}`, {
    deploymentId: d._id,
  })
}

/** Deletes a deployment after trying to stop it (a failed stop is ignored). */
export async function deleteDeployment(d: Target): Promise<void> {
  try {
    await stopDeployment(d)
  } catch {
    // Not running, or already stopped: delete anyway.
  }
  await api.delete(`/api/deployments/${encodeURIComponent(d._id)}`)
}

function useHostingMutation(
  fn: (d: Target) => Promise<void>,
  success: string,
  failure: string,
  { onSuccess, keepDetail = true }: { onSuccess?: (d: Target) => void; keepDetail?: boolean } = {},
) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: fn,
    onSuccess: (_, d) => {
      toast.success(success)
      onSuccess?.(d)
    },
    onError: () => {
      toast.error(failure)
    },
    onSettled: () => {
      // A deleted deployment's own page is left alone: refetching it would fail.
      void queryClient.invalidateQueries({ queryKey: keepDetail ? deploymentKeys.all : deploymentKeys.lists() })
      // A project's status follows its deployments.
      void queryClient.invalidateQueries({ queryKey: sharedKeys.projects })
      // A deleted deployment frees its share of the storage budget.
      void queryClient.invalidateQueries({ queryKey: sharedKeys.profile })
    },
  })
}

export function useStopDeployment() {
  return useHostingMutation(stopDeployment, 'Deployment stopped successfully', 'Failed to stop deployment')
}

export function useRestartDeployment() {
  return useHostingMutation(
    restartDeployment,
    'Deployment restarted successfully',
    'Failed to restart deployment',
  )
}

export function useDeleteDeployment(options: { onSuccess?: (d: Target) => void } = {}) {
  return useHostingMutation(deleteDeployment, 'Deployment deleted successfully', 'Failed to delete deployment', {
    onSuccess: options.onSuccess,
    keepDetail: false,
  })
}
