import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api-client'
import { projectKeys } from './keys'

/** One of a project's persistent data folders: production's, or a preview's own. */
export type DataFolder = {
  name: string
  bytes: number
  measuredAt: string
}

/** A project's data folders as GET /api/projects/{id}/data answers them. */
export type ProjectData = {
  /** Where the project's server apps see their folder (DATA_DIR). */
  mount: string
  /** Every folder's bytes, as last measured. */
  size: number
  folders: DataFolder[]
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
