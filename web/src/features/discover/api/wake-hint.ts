import { useEffect, useRef, type RefObject } from 'react'
import { api } from '@/lib/api-client'

/**
 * POST /api/deployments/public/{id}/wake: asks the platform to start waking a
 * sleeping app (no sign-in; rate-limited per visitor). Failures are only
 * logged: the visit wakes the app anyway.
 */
export async function sendWakeHint(id: string): Promise<void> {
  try {
    await api.post(`/api/deployments/public/${encodeURIComponent(id)}/wake`)
  } catch (err) {
    console.warn('Could not send the wake hint:', err)
  }
}

/**
 * Sends the wake hint of a sleeping app once, when its card first comes into
 * view (IntersectionObserver), so that a visit finds it awake. Once per card
 * per page view: a card that scrolls out and back does not send it again.
 */
export function useWakeHint(ref: RefObject<Element | null>, id: string, sleeping: boolean | undefined) {
  const sent = useRef(false)
  useEffect(() => {
    const el = ref.current
    if (!sleeping || sent.current || !el) return
    if (typeof IntersectionObserver === 'undefined') return
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !sent.current) {
        sent.current = true
        observer.disconnect()
        void sendWakeHint(id)
      }
    })
    observer.observe(el)
    return () => observer.disconnect()
  }, [ref, id, sleeping])
}
