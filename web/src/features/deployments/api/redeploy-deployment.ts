import { useNavigate } from 'react-router'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { paths } from '@/config/paths'
import { api, errorMessage } from '@/lib/api-client'
import { sharedKeys } from '@/lib/query-keys'
import type { Deployment } from '../types'
import { deploymentKeys } from './keys'

export type RedeployInput = { id: string; noCache?: boolean }

/**
 * Builds the same commit again (POST /api/deployments/{id}/redeploy); noCache
 * skips restoring the build caches (a new cache is saved). Answers the new
 * pending deployment.
 */
export async function redeployDeployment({ id, noCache }: RedeployInput): Promise<Deployment | undefined> {
  const data = await api.post<{ deployment?: Deployment }>(
    `/api/deployments/${encodeURIComponent(id)}/redeploy`,
    noCache ? { noCache: true } : {},
  )
  return data?.deployment
}

export const REDEPLOY_STARTED = 'Redeploy started'
export const REDEPLOY_NO_CACHE_STARTED = 'Redeploy without cache started'

/**
 * Redeploys and says so; with openNew (a deployment's own page) it then opens
 * the new deployment, whose log streams there.
 */
export function useRedeployDeployment({ openNew = false }: { openNew?: boolean } = {}) {
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  return useMutation({
    mutationFn: redeployDeployment,
    onSuccess: (deployment, input) => {
      toast.success(input.noCache ? REDEPLOY_NO_CACHE_STARTED : REDEPLOY_STARTED)
      if (openNew && deployment?._id) navigate(paths.deployment.getHref(deployment._id))
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to start the redeploy'))
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: deploymentKeys.all })
      void queryClient.invalidateQueries({ queryKey: sharedKeys.projects })
      // A new build counts against the storage budget.
      void queryClient.invalidateQueries({ queryKey: sharedKeys.profile })
    },
  })
}
