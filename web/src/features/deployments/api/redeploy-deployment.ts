import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import { sharedKeys } from '@/lib/query-keys'
import type { Deployment } from '../types'
import { deploymentKeys } from './keys'

export type RedeployInput = { id: string; noCache?: boolean }

/** Builds the same commit again; answers the new (pending) deployment. */
export async function redeployDeployment({ id, noCache }: RedeployInput): Promise<Deployment | undefined> {
  const data = await api.post<{ deployment?: Deployment }>(
    `/api/deployments/${encodeURIComponent(id)}/redeploy`,
    noCache ? { noCache: true } : {},
  )
  return data?.deployment
}

export const REDEPLOY_STARTED = 'Redeploy started'

export function useRedeployDeployment() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: redeployDeployment,
    onSuccess: () => {
      toast.success(REDEPLOY_STARTED)
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
