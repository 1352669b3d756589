import { queryOptions, skipToken, useMutation, useQuery } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import type { RepoLookup } from '../types'
import { projectKeys } from './keys'

/** Describes a public repository and suggests its build settings. */
export async function lookupPublicRepo(repoUrl: string): Promise<RepoLookup> {
  return api.post<RepoLookup>('/api/projects/public-repo', { repoUrl })
}

export const REPO_FETCH_FAILED = "Failed to fetch repository. Make sure it's a public GitHub repository."

export function useLookupPublicRepo(options: { onSuccess?: (lookup: RepoLookup) => void } = {}) {
  return useMutation({
    mutationFn: lookupPublicRepo,
    onSuccess: (lookup) => {
      toast.success(`Repository ${lookup.repository.fullName} loaded successfully`)
      options.onSuccess?.(lookup)
    },
    onError: (err) => {
      toast.error(errorMessage(err, REPO_FETCH_FAILED))
    },
  })
}

/**
 * The lookup of a connected GitHub repository, run quietly (no toast, no
 * retry) since it only fills the "Framework" of the chosen repository; no
 * repository, no lookup.
 */
export function repoDetectionQueryOptions(repoUrl: string | undefined) {
  return queryOptions({
    queryKey: projectKeys.detection(repoUrl ?? ''),
    queryFn: repoUrl ? () => lookupPublicRepo(repoUrl) : skipToken,
    retry: false,
    staleTime: Infinity,
  })
}

export function useRepoDetection(repoUrl: string | undefined) {
  return useQuery(repoDetectionQueryOptions(repoUrl))
}
