// Client validation of SPEC §5, with its exact messages. Each field shows the
// first rule it breaks.
import { z } from 'zod'
import { FULL_NAME_MAX, PASSWORD_MIN, USERNAME_MIN } from '@/config/constants'
import { EMAIL_PATTERN } from '@/lib/validation'

export const registerSchema = z
  .object({
    fullName: z
      .string()
      .trim()
      .min(1, 'Full name is required')
      .max(FULL_NAME_MAX, `Full name cannot exceed ${FULL_NAME_MAX} characters`),
    username: z
      .string()
      .trim()
      .min(1, 'Username is required')
      .min(USERNAME_MIN, `Username must be at least ${USERNAME_MIN} characters long`)
      .regex(/^[A-Za-z0-9_-]+$/, 'Username can only contain letters, numbers, underscores, and hyphens'),
    email: z
      .string()
      .trim()
      .min(1, 'Email is required')
      .regex(EMAIL_PATTERN, 'Please enter a valid email address'),
    password: z
      .string()
      .min(1, 'Password is required')
      .min(PASSWORD_MIN, `Password must be at least ${PASSWORD_MIN} characters long`),
    confirmPassword: z.string().min(1, 'Please confirm your password'),
    acceptTerms: z.boolean().refine((v) => v, 'You must accept the terms and privacy policy'),
  })
  .refine((v) => v.confirmPassword === '' || v.password === v.confirmPassword, {
    message: 'Passwords do not match',
    path: ['confirmPassword'],
    // Compare even when other fields are still wrong.
    when: (payload) =>
      typeof payload.value === 'object' &&
      payload.value !== null &&
      typeof (payload.value as Record<string, unknown>).password === 'string' &&
      typeof (payload.value as Record<string, unknown>).confirmPassword === 'string',
  })

export type RegisterValues = z.input<typeof registerSchema>
export type RegisterField = keyof RegisterValues
