import { useMutation, useQueryClient } from '@tanstack/react-query'
import { DEFAULT_DEPLOYMENT_VERSION } from '@/config/constants'
import { api } from '@/lib/api-client'
import type { Deployment } from '../types'
import { deploymentKeys } from './keys'

export type CreateDeploymentInput = {
  projectId: string
  version?: string
  buildCommand?: string
  outputDirectory?: string
}

/** Queues a build of a project; answers the pending deployment. */
export async function createDeployment(input: CreateDeploymentInput): Promise<Deployment | undefined> {
  const data = await api.post<{ deployment?: Deployment }>('/api/deployments', {
    ...input,
    version: input.version ?? DEFAULT_DEPLOYMENT_VERSION,
  })
  return data?.deployment
}

/** Starts a deployment; the caller says how it went and where to go. */
export function useCreateDeployment() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createDeployment,
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: deploymentKeys.all })
    },
  })
}
