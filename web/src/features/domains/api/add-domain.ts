import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import type { Domain } from '../types'
import { domainKeys } from './keys'

/** Adds a custom domain to a project; the answer holds the records to create. */
export async function addDomain(projectId: string, name: string): Promise<Domain> {
  const data = await api.post<{ domain: Domain }>(`/api/projects/${encodeURIComponent(projectId)}/domains`, { name })
  return data.domain
}

export function useAddDomain(projectId: string, options: { onSuccess?: (domain: Domain) => void } = {}) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (name: string) => addDomain(projectId, name),
    onSuccess: (domain) => {
      toast.success(`${domain.name} added: create its DNS records`)
      options.onSuccess?.(domain)
      return queryClient.invalidateQueries({ queryKey: domainKeys.list(projectId) })
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to add the domain'))
    },
  })
}
