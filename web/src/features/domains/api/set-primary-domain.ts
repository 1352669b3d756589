import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import type { Domain } from '../types'
import { domainKeys } from './keys'

/** Makes a domain its project's primary one. */
export async function setPrimaryDomain(projectId: string, domainId: string): Promise<Domain> {
  const data = await api.post<{ domain: Domain }>(
    `/api/projects/${encodeURIComponent(projectId)}/domains/${encodeURIComponent(domainId)}/primary`,
  )
  return data.domain
}

export function useSetPrimaryDomain(projectId: string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (domainId: string) => setPrimaryDomain(projectId, domainId),
    onSuccess: (domain) => {
      toast.success(`${domain.name} is now the primary domain`)
      return queryClient.invalidateQueries({ queryKey: domainKeys.list(projectId) })
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to set the primary domain'))
    },
  })
}
