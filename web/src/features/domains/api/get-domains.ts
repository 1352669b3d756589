import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api-client'
import type { Domain } from '../types'
import { domainKeys } from './keys'

/**
 * How often the list is fetched again while a domain waits for its DNS
 * records or, verified, for its certificate (issued at the first HTTPS
 * visit, which happens elsewhere).
 */
export const DOMAINS_POLL_MS = 5000

/** A project's custom domains, oldest first, each with the records it needs. */
export async function getDomains(projectId: string, signal?: AbortSignal): Promise<Domain[]> {
  const data = await api.get<{ domains?: Domain[] }>(`/api/projects/${encodeURIComponent(projectId)}/domains`, { signal })
  return data?.domains ?? []
}

export function domainsQueryOptions(projectId: string) {
  return queryOptions({
    queryKey: domainKeys.list(projectId),
    queryFn: ({ signal }) => getDomains(projectId, signal),
    // Polls while a domain waits for DNS or for its certificate, so
    // Verified and then Certificate issued show up by themselves.
    refetchInterval: (query) =>
      query.state.data?.some((d) => d.status === 'waiting_dns' || d.status === 'verified') ? DOMAINS_POLL_MS : false,
    meta: { errorMessage: 'Failed to load custom domains' },
  })
}

export function useDomains(projectId: string) {
  return useQuery(domainsQueryOptions(projectId))
}
