// Profile rules of SPEC §5: full name, username and email are required, and
// the email must look like an address.
import { z } from 'zod'
import { FULL_NAME_MAX } from '@/config/constants'
import { EMAIL_PATTERN } from '@/lib/validation'

export const profileSchema = z.object({
  fullName: z
    .string()
    .trim()
    .min(1, 'Full name is required')
    .max(FULL_NAME_MAX, `Full name cannot exceed ${FULL_NAME_MAX} characters`),
  username: z.string().trim().min(1, 'Username is required'),
  email: z
    .string()
    .trim()
    .min(1, 'Email is required')
    .regex(EMAIL_PATTERN, 'Please enter a valid email address'),
})

export type ProfileValues = z.input<typeof profileSchema>
