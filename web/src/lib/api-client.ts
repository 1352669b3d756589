// The only fetch wrapper of the app. It sends JSON with the bearer token
// stored under "token", unwraps the `{success, data}` envelope and throws an
// ApiError carrying the HTTP status and the server's `message`.
import { TOKEN_STORAGE_KEY } from '@/config/constants'

/**
 * ApiError is what every failed call throws. `message` is the server's
 * message when it sent one (`serverMessage` is then set too), else a generic
 * description of what went wrong. `status` is 0 when the server was not reached.
 */
export class ApiError extends Error {
  readonly status: number
  readonly serverMessage: string | undefined

  constructor(status: number, message: string, serverMessage?: string) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.serverMessage = serverMessage
  }
}

export function getToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_STORAGE_KEY)
  } catch {
    return null
  }
}

export function setToken(token: string | null): void {
  try {
    if (token) localStorage.setItem(TOKEN_STORAGE_KEY, token)
    else localStorage.removeItem(TOKEN_STORAGE_KEY)
  } catch {
    // Storage unavailable (private mode): the session lasts for this page only.
  }
}

type RequestOptions = {
  body?: unknown
  /** A file sent as the body as it is, with its own content type (instead of JSON). */
  file?: Blob
  signal?: AbortSignal
  /** Query parameters; undefined values are left out. */
  params?: Record<string, string | number | boolean | undefined>
}

type Envelope = { success?: boolean; data?: unknown; message?: unknown }

function buildURL(path: string, params?: RequestOptions['params']): string {
  if (!params) return path
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) search.set(key, String(value))
  }
  const query = search.toString()
  return query ? `${path}${path.includes('?') ? '&' : '?'}${query}` : path
}

async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' }
  const token = getToken()
  if (token) headers.Authorization = `Bearer ${token}`
  let body: string | Blob | undefined
  if (options.file !== undefined) {
    headers['Content-Type'] = options.file.type || 'application/octet-stream'
    body = options.file
  } else if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json'
    body = JSON.stringify(options.body)
  }

  let response: Response
  try {
    response = await fetch(buildURL(path, options.params), {
      method,
      headers,
      body,
      signal: options.signal,
    })
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err
    throw new ApiError(0, 'Could not reach the server. Check your connection and try again.')
  }

  let payload: Envelope | undefined
  const text = await response.text()
  if (text) {
    try {
      payload = JSON.parse(text) as Envelope
    } catch {
      payload = undefined
    }
  }

  const serverMessage =
    payload && typeof payload.message === 'string' && payload.message ? payload.message : undefined

  if (!response.ok || payload?.success === false) {
    throw new ApiError(
      response.status,
      serverMessage ?? `Request failed with status ${response.status}`,
      serverMessage,
    )
  }

  if (payload && typeof payload === 'object' && 'success' in payload) {
    return payload.data as T
  }
  return payload as T
}

/**
 * downloadFile fetches path with the bearer token and hands the answer to
 * the browser as a download named by its Content-Disposition (else
 * `fallbackName`). A failed answer throws the server's message as ApiError.
 */
export async function downloadFile(path: string, fallbackName: string): Promise<void> {
  const headers: Record<string, string> = {}
  const token = getToken()
  if (token) headers.Authorization = `Bearer ${token}`
  let response: Response
  try {
    response = await fetch(path, { headers })
  } catch {
    throw new ApiError(0, 'Could not reach the server. Check your connection and try again.')
  }
  if (!response.ok) {
    let message: string | undefined
    try {
      const payload = (await response.json()) as Envelope
      if (typeof payload.message === 'string' && payload.message) message = payload.message
    } catch {
      message = undefined
    }
    throw new ApiError(response.status, message ?? `Request failed with status ${response.status}`, message)
  }
  const blob = await response.blob()
  const disposition = response.headers.get('Content-Disposition') ?? ''
  const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? fallbackName
  const url = URL.createObjectURL(blob)
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.appendChild(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

export const api = {
  get: <T>(path: string, options?: Omit<RequestOptions, 'body'>) => request<T>('GET', path, options),
  post: <T>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('POST', path, { ...options, body }),
  /** POSTs a file as the request body (its content type, not JSON). */
  upload: <T>(path: string, file: Blob, options?: Omit<RequestOptions, 'body' | 'file'>) =>
    request<T>('POST', path, { ...options, file }),
  put: <T>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('PUT', path, { ...options, body }),
  patch: <T>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('PATCH', path, { ...options, body }),
  delete: <T>(path: string, options?: RequestOptions) => request<T>('DELETE', path, options),
}

/** isNotFound tells whether err is the API's 404: the thing asked for is not there (or not the caller's). */
export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404
}

/**
 * errorMessage picks the text of an error toast: the server's message when
 * present; else, with `useErrorText`, the error's own text when it says
 * something useful (the server could not be reached, or a non-HTTP failure);
 * else `fallback`.
 */
export function errorMessage(err: unknown, fallback: string, useErrorText = false): string {
  if (err instanceof ApiError) {
    if (err.serverMessage) return err.serverMessage
    if (useErrorText && err.status === 0) return err.message
    return fallback
  }
  if (useErrorText && err instanceof Error && err.message) return err.message
  return fallback
}
