import { useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api-client'
import { updateCachedApp } from './update-apps'

/**
 * Counts a visit when Visit App is clicked (once per visitor, app and hour)
 * and says whether it counted. Failures are only logged (SPEC §8).
 */
export async function recordView(id: string): Promise<boolean> {
  try {
    const data = await api.post<{ counted?: boolean }>(`/api/deployments/public/${encodeURIComponent(id)}/view`)
    return data?.counted ?? false
  } catch (err) {
    console.warn('Could not record the visit:', err)
    return false
  }
}

/** recordView that also adds the counted visit to the app's cards. */
export function useRecordView() {
  const queryClient = useQueryClient()
  return async (id: string) => {
    if (await recordView(id)) {
      updateCachedApp(queryClient, id, (app) => ({ ...app, views: app.views + 1 }))
    }
  }
}
