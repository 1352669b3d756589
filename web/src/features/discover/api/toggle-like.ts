import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api-client'
import type { DiscoverApp } from '../types'
import { updateCachedApp } from './update-apps'

export type LikeResult = { likeCount: number; liked: boolean }

/** Likes an app for the current user or visitor, or takes the like back. */
export async function toggleLike(id: string): Promise<LikeResult> {
  return api.post<LikeResult>(`/api/deployments/public/${encodeURIComponent(id)}/like`)
}

const flip = (app: DiscoverApp): DiscoverApp => ({
  ...app,
  liked: !app.liked,
  likeCount: Math.max(0, app.likeCount + (app.liked ? -1 : 1)),
})

/**
 * The like toggle: the card changes at once, then takes the server's count
 * and state. A failure puts the card back and is only logged (SPEC §8).
 */
export function useToggleLike() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (app: DiscoverApp) => toggleLike(app._id),
    onMutate: (app) => {
      updateCachedApp(queryClient, app._id, flip)
    },
    onSuccess: (result, app) => {
      updateCachedApp(queryClient, app._id, (a) => ({ ...a, liked: result.liked, likeCount: result.likeCount }))
    },
    onError: (err, app) => {
      updateCachedApp(queryClient, app._id, flip)
      console.warn('Could not like the app:', err)
    },
  })
}
