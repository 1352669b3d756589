import { useState } from 'react'
import { useNavigate } from 'react-router'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { DEFAULT_DEPLOYMENT_VERSION, REDIRECT_AFTER_ACTION_MS } from '@/config/constants'
import { paths } from '@/config/paths'
import { api, errorMessage } from '@/lib/api-client'
import { sharedKeys } from '@/lib/query-keys'
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
      // The storage usage (a refused deploy says it is full).
      void queryClient.invalidateQueries({ queryKey: sharedKeys.profile })
    },
  })
}

/**
 * useDeployProject starts a deployment of a project (version 1.0.0), says
 * so, and after 1 s opens it, or the list when no id came back (SPEC §4).
 */
export function useDeployProject() {
  const navigate = useNavigate()
  const create = useCreateDeployment()
  const [redirecting, setRedirecting] = useState(false)
  const deploy = (projectId: string, options: { onError?: () => void } = {}) =>
    create.mutate(
      { projectId },
      {
        onSuccess: (deployment) => {
          toast.success('Deployment started successfully! Redirecting to deployment...')
          setRedirecting(true)
          setTimeout(() => {
            navigate(deployment?._id ? paths.deployment.getHref(deployment._id) : paths.deployments.getHref())
          }, REDIRECT_AFTER_ACTION_MS)
        },
        onError: (err) => {
          toast.error(errorMessage(err, 'Failed to start deployment'))
          options.onError?.()
        },
      },
    )
  return { deploy, isPending: create.isPending || redirecting }
}
