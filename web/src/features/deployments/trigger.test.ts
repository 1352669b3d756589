import { describe, expect, it } from 'vitest'
import { isPreview, previewSource, targetLabel, triggerLabel } from './trigger'

describe('triggerLabel', () => {
  it.each([
    [{ trigger: 'push', author: 'Maya Chen' }, null, 'Pushed by Maya Chen'],
    [{ trigger: 'push', author: '  ' }, null, 'Pushed'],
    [{ trigger: 'push' }, null, 'Pushed'],
    [{ trigger: 'pull_request', pullRequest: 12 }, null, 'Pull request #12'],
    [{ trigger: 'pull_request' }, null, 'Pull request'],
    [{ trigger: 'hook' }, null, 'Deploy hook'],
    [{ trigger: 'redeploy' }, null, 'Redeploy'],
    [{ trigger: 'rollback' }, null, 'Rollback'],
    [{ trigger: 'manual' }, null, 'Manual'],
    [{}, null, 'Manual'],
    [{ trigger: 'something-new' }, null, 'Manual'],
    // A promoted earlier deployment is a rollback whatever first built it.
    [{ trigger: 'push', author: 'Maya Chen' }, '2026-03-05T10:00:00Z', 'Rollback'],
  ])('%o promoted %s → %s', (metadata, promotedAt, label) => {
    expect(triggerLabel({ metadata, promotedAt })).toBe(label)
  })

  it('says Manual without metadata', () => {
    expect(triggerLabel({})).toBe('Manual')
  })
})

describe('targets', () => {
  it('tells previews from production', () => {
    expect(isPreview({ target: 'preview' })).toBe(true)
    expect(isPreview({ target: 'production' })).toBe(false)
    expect(isPreview({})).toBe(false)
    expect(targetLabel({ target: 'preview' })).toBe('Preview')
    expect(targetLabel({})).toBe('Production')
  })

  it('names a preview by its pull request, else its branch', () => {
    expect(previewSource({ metadata: { branch: 'feature/x', pullRequest: 7 } })).toBe('Pull request #7')
    expect(previewSource({ metadata: { branch: 'feature/x' } })).toBe('feature/x')
    expect(previewSource({})).toBe('Unknown branch')
  })
})
