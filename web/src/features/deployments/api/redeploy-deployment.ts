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
 * Builds the deployment's project again from the same settings (POST
 * /api/deployments/{id}/redeploy); noCache skips restoring the build
 * caches (a new cache is saved). Answers the new pending deployment.
 */
export async function redeployDeployment({ id, noCache }: RedeployInput): Promise<Deployment | undefined> {
  const data = await api.post<{ deployment?: Deployment }>(
    `/api/deployments/${encodeURIComponent(id)}/redeploy`,
    noCache ? { noCache: true } : {},
  )
  return data?.deployment
}

/** Redeploys, says so, and opens the new deployment. */
export function useRedeployDeployment() {
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  return useMutation({
    mutationFn: redeployDeployment,
    onSuccess: (deployment, input) => {
      toast.success(input.noCache ? 'Redeploying without cache…' : 'Redeploying…')
      if (deployment?._id) navigate(paths.deployment.getHref(deployment._id))
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to redeploy'))
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: deploymentKeys.all })
      void queryClient.invalidateQueries({ queryKey: sharedKeys.projects })
    },
  })
}
