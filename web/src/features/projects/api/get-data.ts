import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, downloadFile } from '@/lib/api-client'
import { projectKeys } from './keys'

/** One of a project's persistent data folders: production's, or a preview's own. */
export type DataFolder = {
  name: string
  bytes: number
  measuredAt: string
}

/** A daily snapshot of production's data folder; its id is when it was taken. */
export type DataSnapshot = {
  id: string
  at: string
  bytes: number
}

/** A project's data folders as GET /api/projects/{id}/data answers them. */
export type ProjectData = {
  /** Where the project's server apps see their folder (DATA_DIR). */
  mount: string
  /** Every folder's bytes, as last measured. */
  size: number
  folders: DataFolder[]
  /** Production's snapshots, newest first. */
  snapshots?: DataSnapshot[]
}

export async function getProjectData(id: string, signal?: AbortSignal): Promise<ProjectData> {
  const data = await api.get<{ data?: ProjectData }>(`/api/projects/${encodeURIComponent(id)}/data`, { signal })
  return data?.data ?? { mount: '/data', size: 0, folders: [] }
}

export function projectDataQueryOptions(id: string) {
  return queryOptions({
    queryKey: projectKeys.data(id),
    queryFn: ({ signal }) => getProjectData(id, signal),
  })
}

export function useProjectData(id: string) {
  return useQuery(projectDataQueryOptions(id))
}

/** What a data folder's name says: "Production", or "Preview <label>". */
export function dataFolderLabel(name: string): string {
  if (name === 'production') return 'Production'
  return name.startsWith('preview-') ? `Preview ${name.slice('preview-'.length)}` : name
}

/** Saves the project's production data folder as a .tar.gz download. */
export function downloadProjectData(id: string): Promise<void> {
  return downloadFile(`/api/projects/${encodeURIComponent(id)}/data/download`, 'data.tar.gz')
}

/** Replaces the project's production data folder with a .tar.gz, or with a snapshot (its app stopped). */
export function useRestoreProjectData(id: string) {
  const queryClient = useQueryClient()
  const path = `/api/projects/${encodeURIComponent(id)}/data/restore`
  return useMutation({
    mutationFn: (from: File | DataSnapshot) =>
      from instanceof Blob
        ? api.upload<{ data: ProjectData }>(path, from.type ? from : new Blob([from], { type: 'application/gzip' }))
        : api.post<{ data: ProjectData }>(path, undefined, { params: { snapshot: from.id } }),
    onSuccess: (answer) => {
      queryClient.setQueryData(projectKeys.data(id), answer.data)
      toast.success('Data folder restored')
    },
    onError: (err) => toast.error(err instanceof Error ? err.message : 'The data folder could not be restored'),
  })
}
