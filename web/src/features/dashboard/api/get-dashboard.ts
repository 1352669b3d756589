import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api-client'
import type { DashboardData } from '../types'
import { dashboardKeys } from './keys'

export async function getDashboard(signal?: AbortSignal): Promise<DashboardData> {
  const data = await api.get<Partial<DashboardData>>('/api/dashboard', { signal })
  return {
    stats: {
      totalProjects: 0,
      activeDeployments: 0,
      totalDeployments: 0,
      failedDeployments: 0,
      thisMonth: 0,
      ...data?.stats,
    },
    recentProjects: data?.recentProjects ?? [],
    recentDeployments: data?.recentDeployments ?? [],
  }
}

/** SPEC §8: a toast, and the screen's retry says it too. */
export const DASHBOARD_LOAD_FAILED = 'Failed to load dashboard data'

export function dashboardQueryOptions() {
  return queryOptions({
    queryKey: dashboardKeys.data(),
    queryFn: ({ signal }) => getDashboard(signal),
    meta: { errorMessage: DASHBOARD_LOAD_FAILED },
  })
}

/** The signed-in user's numbers and newest projects and deployments. */
export function useDashboard() {
  return useQuery(dashboardQueryOptions())
}
