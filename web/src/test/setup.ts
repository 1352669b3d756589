import '@testing-library/jest-dom/vitest'
import { cleanup, configure } from '@testing-library/react'
import toast from 'react-hot-toast'
import { afterEach, vi } from 'vitest'

// findBy*/waitFor wait up to 5 s (not 1 s): on a loaded 2-core CI machine a
// render can take longer than a second, which is slowness, not failure.
configure({ asyncUtilTimeout: 5000 })

// Dates in tests are formatted in UTC whatever the machine's zone.
process.env.TZ = 'UTC'

// jsdom has no matchMedia; tests that care replace it with mockMatchMedia().
if (typeof window.matchMedia !== 'function') {
  Object.defineProperty(window, 'matchMedia', {
    configurable: true,
    writable: true,
    value: (query: string) => ({
      matches: false,
      media: query,
      onchange: null,
      addEventListener: () => {},
      removeEventListener: () => {},
      addListener: () => {},
      removeListener: () => {},
      dispatchEvent: () => false,
    }),
  })
}

// jsdom does not implement scrolling; ScrollRestoration calls it.
window.scrollTo = () => {}

afterEach(() => {
  cleanup()
  toast.remove()
  localStorage.clear()
  document.documentElement.className = ''
  document.documentElement.removeAttribute('style')
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
})
