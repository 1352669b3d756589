import { render } from '@testing-library/react'
import { useRef } from 'react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { useWakeHint } from './wake-hint'

const post = vi.hoisted(() => vi.fn())
vi.mock('@/lib/api-client', () => ({ api: { post } }))

let observed: { cb: IntersectionObserverCallback; disconnect: () => void }[] = []

class FakeObserver {
  cb: IntersectionObserverCallback
  disconnect = vi.fn()
  constructor(cb: IntersectionObserverCallback) {
    this.cb = cb
    observed.push(this)
  }
  observe() {}
  unobserve() {}
}

function Card({ id, sleeping }: { id: string; sleeping?: boolean }) {
  const ref = useRef<HTMLDivElement>(null)
  useWakeHint(ref, id, sleeping)
  return <div ref={ref}>card</div>
}

const seen = (visible: boolean) =>
  observed.forEach((o) => o.cb([{ isIntersecting: visible } as IntersectionObserverEntry], {} as IntersectionObserver))

describe('useWakeHint', () => {
  beforeEach(() => {
    observed = []
    post.mockReset().mockResolvedValue({ waking: true })
    vi.stubGlobal('IntersectionObserver', FakeObserver)
  })
  afterEach(() => vi.unstubAllGlobals())

  it('sends the hint of a sleeping app once, when its card comes into view', () => {
    render(<Card id="d1" sleeping />)
    seen(false)
    expect(post).not.toHaveBeenCalled()
    seen(true)
    seen(true)
    expect(post).toHaveBeenCalledTimes(1)
    expect(post).toHaveBeenCalledWith('/api/deployments/public/d1/wake')
  })

  it('sends nothing for an awake app', () => {
    render(<Card id="d2" />)
    expect(observed).toHaveLength(0)
    expect(post).not.toHaveBeenCalled()
  })
})
