import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import { deploymentKeys } from './keys'

/** Whether a project's repository is private, and whether its owner opened its previews. */
export type PreviewAccess = { private: boolean; open: boolean }

/** GET /api/projects/{id}/preview-access */
export async function getPreviewAccess(projectId: string, signal?: AbortSignal): Promise<PreviewAccess> {
  const data = await api.get<{ access: PreviewAccess }>(
    `/api/projects/${encodeURIComponent(projectId)}/preview-access`,
    { signal },
  )
  return data.access
}

export function previewAccessQueryOptions(projectId: string) {
  return queryOptions({
    queryKey: deploymentKeys.previewAccess(projectId),
    queryFn: ({ signal }) => getPreviewAccess(projectId, signal),
  })
}

export function usePreviewAccess(projectId: string) {
  return useQuery(previewAccessQueryOptions(projectId))
}

/** Opens a private repository's previews to anyone with their address, or closes them again. */
export function useSetPreviewsOpen(projectId: string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (open: boolean) =>
      (
        await api.put<{ access: PreviewAccess }>(`/api/projects/${encodeURIComponent(projectId)}/preview-access`, {
          open,
        })
      ).access,
    onSuccess: (access) => {
      queryClient.setQueryData(deploymentKeys.previewAccess(projectId), access)
      toast.success(access.open ? 'Previews are open to anyone with the link' : 'Previews need your sign-in again')
    },
    onError: (err) => {
      toast.error(errorMessage(err, 'Failed to change who can open previews'))
    },
  })
}

/** POST /api/previews/access: the address on a preview's host that lets this (signed-in owner's) browser in. */
export async function previewHandOff(host: string, to: string): Promise<string> {
  const data = await api.post<{ url: string }>('/api/previews/access', { host, to })
  return data.url
}
