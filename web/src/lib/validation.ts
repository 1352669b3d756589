import type { z } from 'zod'

/** What "looks like an email address" means in every form. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * fieldErrors runs a schema and returns the first message of each failing
 * field, or the parsed data when everything holds.
 */
export function fieldErrors<S extends z.ZodType>(
  schema: S,
  values: unknown,
): { data: z.output<S>; errors: null } | { data: null; errors: Record<string, string> } {
  const result = schema.safeParse(values)
  if (result.success) return { data: result.data, errors: null }
  const errors: Record<string, string> = {}
  for (const issue of result.error.issues) {
    const key = String(issue.path[0] ?? '')
    if (key && !(key in errors)) errors[key] = issue.message
  }
  return { data: null, errors }
}
