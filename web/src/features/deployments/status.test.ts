import { describe, expect, it } from 'vitest'
import { canPromote, liveProduction, succeeded } from './status'

describe('promote rules', () => {
  const list = [
    { _id: 'd4', status: 'failed' },
    { _id: 'd3', status: 'live' },
    { _id: 'd2', status: 'stopped' },
    { _id: 'd1', status: 'stopped', prunedAt: '2026-03-01T00:00:00Z' },
  ]

  it('finds the live production deployment', () => {
    // A live one wins over an older active id (the project was read before a push went live).
    expect(liveProduction(list, 'd2')?._id).toBe('d3')
    expect(liveProduction(list.slice(2), 'd2')?._id).toBe('d2')
    expect(liveProduction(list, undefined)?._id).toBe('d3')
    expect(liveProduction(list, 'gone')?._id).toBe('d3')
    expect(liveProduction([], undefined)).toBeUndefined()
  })

  it('offers Promote on successful, kept, non-live production deployments', () => {
    expect(succeeded('live')).toBe(true)
    expect(succeeded('building')).toBe(false)
    expect(list.filter((d) => canPromote(d, 'd3')).map((d) => d._id)).toEqual(['d2'])
    expect(canPromote({ _id: 'p', status: 'live', target: 'preview' }, 'd3')).toBe(false)
  })
})
