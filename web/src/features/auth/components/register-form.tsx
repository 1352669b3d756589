import { useRef, useState, type ChangeEvent, type FormEvent } from 'react'
import { Link } from 'react-router'
import { Button } from '@/components/ui/button'
import { Checkbox } from '@/components/ui/checkbox'
import { Input, PasswordInput } from '@/components/ui/input'
import { PASSWORD_MIN } from '@/config/constants'
import { paths } from '@/config/paths'
import { fieldErrors } from '@/lib/validation'
import type { User } from '@/types/api'
import { useRegister } from '../api/register'
import { registerSchema, type RegisterField, type RegisterValues } from '../schemas'
import { LegalDialog, type LegalDocument } from './legal-dialog'

const linkButton =
  'rounded font-medium text-indigo-600 hover:text-indigo-500 hover:underline dark:text-indigo-400 dark:hover:text-indigo-300'

const FIELD_ORDER: RegisterField[] = [
  'fullName',
  'username',
  'email',
  'password',
  'confirmPassword',
  'acceptTerms',
]

const empty: RegisterValues = {
  fullName: '',
  username: '',
  email: '',
  password: '',
  confirmPassword: '',
  acceptTerms: false,
}

/** Create an account (SPEC §2 Sign up, §5 Registration). */
export function RegisterForm({ onSuccess }: { onSuccess?: (user: User) => void }) {
  const [values, setValues] = useState<RegisterValues>(empty)
  const [errors, setErrors] = useState<Partial<Record<RegisterField, string>>>({})
  const [legal, setLegal] = useState<LegalDocument | null>(null)
  const form = useRef<HTMLFormElement>(null)
  const registration = useRegister({ onSuccess })

  const update = (field: RegisterField) => (event: ChangeEvent<HTMLInputElement>) => {
    const value = field === 'acceptTerms' ? event.target.checked : event.target.value
    setValues((v) => ({ ...v, [field]: value }))
    // Editing a field clears its error.
    setErrors((e) => (e[field] ? { ...e, [field]: undefined } : e))
  }

  const onSubmit = (event: FormEvent) => {
    event.preventDefault()
    if (registration.isPending) return
    const result = fieldErrors(registerSchema, values)
    if (result.errors) {
      setErrors(result.errors)
      const first = FIELD_ORDER.find((f) => result.errors[f])
      if (first) form.current?.querySelector<HTMLElement>(`[name="${first}"]`)?.focus()
      return
    }
    const { fullName, username, email, password } = result.data
    registration.mutate({ username, email, password, fullName })
  }

  const busy = registration.isPending
  return (
    <>
      <form ref={form} onSubmit={onSubmit} noValidate className="space-y-5">
        <Input
          label="Full name"
          name="fullName"
          autoComplete="name"
          placeholder="Ada Lovelace"
          value={values.fullName}
          onChange={update('fullName')}
          error={errors.fullName}
        />
        <Input
          label="Username"
          name="username"
          autoComplete="username"
          placeholder="ada_l"
          autoCapitalize="none"
          spellCheck={false}
          value={values.username}
          onChange={update('username')}
          error={errors.username}
        />
        <Input
          label="Email address"
          name="email"
          type="email"
          autoComplete="email"
          placeholder="you@university.edu"
          value={values.email}
          onChange={update('email')}
          error={errors.email}
        />
        <PasswordInput
          label="Password"
          name="password"
          autoComplete="new-password"
          placeholder="Choose a password"
          value={values.password}
          onChange={update('password')}
          error={errors.password}
          hint={`At least ${PASSWORD_MIN} characters.`}
        />
        <PasswordInput
          label="Confirm password"
          name="confirmPassword"
          autoComplete="new-password"
          placeholder="Type it again"
          value={values.confirmPassword}
          onChange={update('confirmPassword')}
          error={errors.confirmPassword}
        />
        <Checkbox
          name="acceptTerms"
          checked={values.acceptTerms}
          onChange={update('acceptTerms')}
          error={errors.acceptTerms}
          label={
            <>
              I agree to the{' '}
              <button type="button" className={linkButton} onClick={() => setLegal('terms')}>
                Terms of Service
              </button>{' '}
              and{' '}
              <button type="button" className={linkButton} onClick={() => setLegal('privacy')}>
                Privacy Policy
              </button>
            </>
          }
        />
        <Button type="submit" size="lg" className="w-full" loading={busy} disabled={busy}>
          {busy ? 'Creating account...' : 'Create account'}
        </Button>
      </form>
      <LegalDialog document={legal} onClose={() => setLegal(null)} />
    </>
  )
}

export function RegisterFooter() {
  return (
    <>
      Already have an account?{' '}
      <Link to={paths.login.getHref()} className={linkButton}>
        Sign in
      </Link>
    </>
  )
}
