import { queryOptions, useQuery } from '@tanstack/react-query'
import { LOG_FETCH_LIMIT } from '@/config/constants'
import { api } from '@/lib/api-client'
import type { LogEntry } from '../types'
import { logKeys } from './keys'

export type LogsPage = { logs: LogEntry[]; total: number }

/** The newest 200 entries of a deployment, oldest first. */
export async function getLogs(deploymentId: string, signal?: AbortSignal): Promise<LogsPage> {
  const data = await api.get<{ logs?: LogEntry[]; total?: number } | undefined>(
    `/api/deployments/${encodeURIComponent(deploymentId)}/logs`,
    { params: { limit: LOG_FETCH_LIMIT }, signal },
  )
  const logs = data?.logs ?? []
  return { logs, total: data?.total ?? logs.length }
}

export function logsQueryOptions(deploymentId: string) {
  return queryOptions({
    queryKey: logKeys.list(deploymentId),
    queryFn: ({ signal }) => getLogs(deploymentId, signal),
    meta: { errorMessage: 'Failed to fetch logs' },
  })
}

export function useLogs(deploymentId: string) {
  return useQuery(logsQueryOptions(deploymentId))
}
