import { useMutation } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { api, errorMessage } from '@/lib/api-client'
import type { RepoLookup } from '../types'

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
