import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api-client'
import type { EnvVar } from '../types'
import { projectKeys } from './keys'

/** The value every secret variable is shown with. */
export const SECRET_MASK = '••••••••'

/** A project's environment variables, secret values masked. */
export async function getProjectEnv(id: string, signal?: AbortSignal): Promise<EnvVar[]> {
  const data = await api.get<{ variables?: EnvVar[] }>(`/api/projects/${encodeURIComponent(id)}/env`, { signal })
  return data?.variables ?? []
}

export function projectEnvQueryOptions(id: string) {
  return queryOptions({
    queryKey: projectKeys.env(id),
    queryFn: ({ signal }) => getProjectEnv(id, signal),
  })
}

export function useProjectEnv(id: string) {
  return useQuery(projectEnvQueryOptions(id))
}
