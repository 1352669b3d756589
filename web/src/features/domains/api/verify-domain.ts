import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import type { Domain } from '../types'
import { domainKeys } from './keys'

/** Checks a domain's DNS records now. */
export async function verifyDomain(projectId: string, domainId: string): Promise<Domain> {
  const data = await api.post<{ domain: Domain }>(
    `/api/projects/${encodeURIComponent(projectId)}/domains/${encodeURIComponent(domainId)}/verify`,
  )
  return data.domain
}

export function useVerifyDomain(projectId: string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (domainId: string) => verifyDomain(projectId, domainId),
    onSuccess: (domain) => {
      if (domain.status === 'verified' || domain.status === 'certificate_issued') toast.success(`${domain.name} is verified`)
      else toast.error(`${domain.name} is not ready yet: see what to fix`)
      return queryClient.invalidateQueries({ queryKey: domainKeys.list(projectId) })
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to check the domain'))
    },
  })
}
