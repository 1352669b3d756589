import { api } from '@/lib/api-client'

/** Counts a visit when Visit App is clicked. Failures are only logged (SPEC §8). */
export async function recordView(id: string): Promise<void> {
  try {
    await api.post(`/api/deployments/public/${encodeURIComponent(id)}/view`)
  } catch (err) {
    console.warn('Could not record the visit:', err)
  }
}
