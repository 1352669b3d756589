import { describe, expect, it } from 'vitest'
import { isNavActive } from './nav-items'

describe('sidebar highlight', () => {
  it.each([
    ['/projects', '/projects', true],
    ['/projects/new', '/projects', true],
    ['/projects/abc/edit', '/projects', true],
    ['/deployments/xyz', '/deployments', true],
    ['/deployments', '/projects', false],
    ['/dashboard', '/dashboard', true],
    ['/dashboard', '/discover', false],
    ['/profile', '/projects', false],
    ['/settings', '/settings', true],
  ])('%s highlights %s: %s', (pathname, to, want) => {
    expect(isNavActive(pathname, to)).toBe(want)
  })
})
