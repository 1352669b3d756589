import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import type { Domain, DomainRedirect } from '../types'
import { domainKeys } from './keys'

/** Sets a domain's apex ↔ www redirect. */
export async function updateDomainRedirect(projectId: string, domainId: string, redirect: DomainRedirect): Promise<Domain> {
  const data = await api.put<{ domain: Domain }>(
    `/api/projects/${encodeURIComponent(projectId)}/domains/${encodeURIComponent(domainId)}`,
    { redirect },
  )
  return data.domain
}

export function useUpdateDomainRedirect(projectId: string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: ({ domainId, redirect }: { domainId: string; redirect: DomainRedirect }) =>
      updateDomainRedirect(projectId, domainId, redirect),
    onSuccess: () => {
      toast.success('Redirect saved')
      return queryClient.invalidateQueries({ queryKey: domainKeys.list(projectId) })
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to save the redirect'))
    },
  })
}
