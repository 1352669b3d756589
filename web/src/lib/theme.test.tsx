import { act, render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it, vi } from 'vitest'
import { ThemeToggle } from '@/components/ui/theme-toggle'
import { ThemeProvider, useTheme } from './theme'

/** A matchMedia whose dark preference can be flipped like the OS would. */
function mockSystemTheme(initiallyDark: boolean) {
  let dark = initiallyDark
  const listeners = new Set<(e: MediaQueryListEvent) => void>()
  vi.stubGlobal('matchMedia', (query: string) => ({
    get matches() {
      return dark
    },
    media: query,
    addEventListener: (_: string, fn: (e: MediaQueryListEvent) => void) => listeners.add(fn),
    removeEventListener: (_: string, fn: (e: MediaQueryListEvent) => void) => listeners.delete(fn),
  }))
  return {
    set(next: boolean) {
      dark = next
      act(() => listeners.forEach((fn) => fn({ matches: next } as MediaQueryListEvent)))
    },
  }
}

function CurrentTheme() {
  const { theme } = useTheme()
  return <p>theme: {theme}</p>
}

function renderTheme() {
  return render(
    <ThemeProvider>
      <CurrentTheme />
      <ThemeToggle />
    </ThemeProvider>,
  )
}

const html = () => document.documentElement

describe('theme', () => {
  it('starts from the stored choice even when the system prefers the other', () => {
    mockSystemTheme(true)
    localStorage.setItem('theme', 'light')
    renderTheme()
    expect(screen.getByText('theme: light')).toBeInTheDocument()
    expect(html()).not.toHaveClass('dark')
  })

  it('uses the system preference when nothing is stored', () => {
    mockSystemTheme(true)
    renderTheme()
    expect(screen.getByText('theme: dark')).toBeInTheDocument()
    expect(html()).toHaveClass('dark')
  })

  it('ignores a stored value that is not dark or light', () => {
    mockSystemTheme(false)
    localStorage.setItem('theme', 'sepia')
    renderTheme()
    expect(screen.getByText('theme: light')).toBeInTheDocument()
  })

  it('follows system changes while nothing is stored, without storing them', () => {
    const system = mockSystemTheme(false)
    renderTheme()
    expect(html()).not.toHaveClass('dark')
    system.set(true)
    expect(screen.getByText('theme: dark')).toBeInTheDocument()
    expect(html()).toHaveClass('dark')
    system.set(false)
    expect(screen.getByText('theme: light')).toBeInTheDocument()
    expect(localStorage.getItem('theme')).toBeNull()
  })

  it('stops following the system once a choice is stored', async () => {
    const system = mockSystemTheme(false)
    renderTheme()
    await userEvent.click(screen.getByRole('button', { name: 'Switch to dark theme' }))
    expect(screen.getByText('theme: dark')).toBeInTheDocument()
    system.set(false)
    expect(screen.getByText('theme: dark')).toBeInTheDocument()
    expect(html()).toHaveClass('dark')
  })

  it('saves every change and toggles the dark class', async () => {
    mockSystemTheme(false)
    renderTheme()
    const user = userEvent.setup()
    await user.click(screen.getByRole('button', { name: 'Switch to dark theme' }))
    expect(localStorage.getItem('theme')).toBe('dark')
    expect(html()).toHaveClass('dark')
    await user.click(screen.getByRole('button', { name: 'Switch to light theme' }))
    expect(localStorage.getItem('theme')).toBe('light')
    expect(html()).not.toHaveClass('dark')
  })
})
