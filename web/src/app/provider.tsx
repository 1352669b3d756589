import { useState, type ReactNode } from 'react'
import { QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { Toaster } from 'react-hot-toast'
import { QUERY_RETRY, TOAST_DURATION_MS } from '@/config/constants'
import { AuthProvider } from '@/lib/auth'
import { toastQueryError } from '@/lib/query-errors'
import { ThemeProvider, useTheme } from '@/lib/theme'

/** The app's data cache. A failed query is toasted here, with its `meta.errorMessage` (lib/query-errors.ts). */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({ onError: toastQueryError }),
    defaultOptions: {
      queries: { retry: QUERY_RETRY, refetchOnWindowFocus: false },
      mutations: { retry: false },
    },
  })
}

function ThemedToaster() {
  const { theme } = useTheme()
  const dark = theme === 'dark'
  return (
    <Toaster
      // Centred just under the 64 px top bar, so the bar's controls stay usable.
      position="top-center"
      containerStyle={{ top: 76 }}
      toastOptions={{
        duration: TOAST_DURATION_MS,
        style: {
          background: dark ? '#18181b' : '#ffffff',
          color: dark ? '#f4f4f5' : '#18181b',
          border: `1px solid ${dark ? '#27272a' : '#e4e4e7'}`,
          borderRadius: '0.75rem',
          fontSize: '0.875rem',
          boxShadow: '0 10px 30px -12px rgb(0 0 0 / 0.25)',
        },
        success: { iconTheme: { primary: '#10b981', secondary: dark ? '#18181b' : '#ffffff' } },
        error: { iconTheme: { primary: '#ef4444', secondary: dark ? '#18181b' : '#ffffff' } },
      }}
    />
  )
}

/** Everything the screens rely on: data cache, theme, session and toasts. */
export function AppProvider({ children, queryClient }: { children: ReactNode; queryClient?: QueryClient }) {
  const [client] = useState(() => queryClient ?? createQueryClient())
  return (
    <QueryClientProvider client={client}>
      <ThemeProvider>
        <AuthProvider>
          {children}
          <ThemedToaster />
        </AuthProvider>
      </ThemeProvider>
    </QueryClientProvider>
  )
}
