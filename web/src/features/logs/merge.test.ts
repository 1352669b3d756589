import { describe, expect, it } from 'vitest'
import { makeLog } from '@/test/fixtures'
import { filterLogs, maxSeq, mergeLogs } from './merge'

describe('log merging', () => {
  it('keeps one entry per seq, in order', () => {
    const merged = mergeLogs([makeLog(1), makeLog(3)], [makeLog(3), makeLog(2), makeLog(4)])
    expect(merged.map((e) => e.seq)).toEqual([1, 2, 3, 4])
    expect(maxSeq(merged)).toBe(4)
    expect(maxSeq([])).toBe(0)
  })

  it('filters by type and level', () => {
    const list = [
      makeLog(1),
      makeLog(2, { type: 'runtime' }),
      makeLog(3, { level: 'error' }),
      makeLog(4, { type: 'runtime', level: 'error' }),
    ]
    expect(filterLogs(list, 'all', 'all')).toHaveLength(4)
    expect(filterLogs(list, 'runtime', 'all').map((e) => e.seq)).toEqual([2, 4])
    expect(filterLogs(list, 'all', 'error').map((e) => e.seq)).toEqual([3, 4])
    expect(filterLogs(list, 'deployment', 'error').map((e) => e.seq)).toEqual([3])
  })
})
