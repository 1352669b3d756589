import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import type { EnvVar } from '../types'
import { projectKeys } from './keys'

/**
 * Replaces a project's variables. A secret sent with an empty value (or the
 * mask) keeps the value the server holds for its name; a new or renamed one
 * sent so is refused (400).
 */
export async function updateProjectEnv(id: string, variables: EnvVar[]): Promise<EnvVar[]> {
  const data = await api.put<{ variables?: EnvVar[] }>(`/api/projects/${encodeURIComponent(id)}/env`, { variables })
  return data?.variables ?? []
}

export function useUpdateProjectEnv(id: string, options: { onSuccess?: (variables: EnvVar[]) => void } = {}) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (variables: EnvVar[]) => updateProjectEnv(id, variables),
    onSuccess: (variables) => {
      queryClient.setQueryData(projectKeys.env(id), variables)
      toast.success('Environment variables saved')
      options.onSuccess?.(variables)
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to save environment variables'))
    },
  })
}
