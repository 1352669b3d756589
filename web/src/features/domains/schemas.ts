// Rules of the Add domain form, the server's (gantry.NormalizeDomain) in
// the same words where the browser can tell.
import { z } from 'zod'

const LABEL = /^[\p{L}\p{N}]([\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/

export const domainNameSchema = z
  .string()
  .trim()
  .min(1, 'Domain is required')
  .max(253, 'Domain cannot exceed 253 characters')
  .refine((s) => !/:\/\/|[/?#@\s]/.test(s), 'Enter the domain name alone, such as www.example.com (no https:// and no path)')
  .refine((s) => !IPV4.test(s.replace(/\.$/, '')) && !s.includes('::'), 'Domain must be a name, not an IP address')
  .refine((s) => !s.includes('*'), 'Wildcard domains are not supported: add each name (such as www.example.com) on its own')
  .refine((s) => !s.includes(':'), 'Enter the domain name without a port')
  .refine((s) => s.replace(/\.$/, '').includes('.'), 'Domain needs at least two parts, such as example.com')
  .refine(
    (s) => s.replace(/\.$/, '').split('.').every((label) => LABEL.test(label)),
    'Each part of the name must be 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen',
  )

/** The first rule a domain name breaks, or null when it may be added. */
export function domainNameError(name: string): string | null {
  const result = domainNameSchema.safeParse(name)
  return result.success ? null : (result.error.issues[0]?.message ?? null)
}
