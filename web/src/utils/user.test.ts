import { describe, expect, it } from 'vitest'
import { planLabel, planLimitsLabel, roleOf } from './user'

describe('role and plan display', () => {
  it('shows unknown or missing roles as student', () => {
    expect(roleOf({ role: 'admin' })).toBe('admin')
    expect(roleOf({ role: 'wizard' })).toBe('student')
    expect(roleOf({})).toBe('student')
    expect(roleOf(null)).toBe('student')
  })

  it('shows unknown or missing plans as Free with the default limits', () => {
    expect(planLabel({ subscription: { plan: 'pro' } })).toBe('Pro')
    expect(planLabel({ subscription: { plan: 'gold' } })).toBe('Free')
    expect(planLabel({})).toBe('Free')
    expect(planLimitsLabel({})).toBe('3 projects · 5 deployments')
    expect(planLimitsLabel({ subscription: { plan: 'pro', maxProjects: 20, maxDeployments: 50 } })).toBe(
      '20 projects · 50 deployments',
    )
  })
})
