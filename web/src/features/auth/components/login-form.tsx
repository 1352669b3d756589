import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import toast from 'react-hot-toast'
import { Button } from '@/components/ui/button'
import { Checkbox } from '@/components/ui/checkbox'
import { Input, PasswordInput } from '@/components/ui/input'
import { paths } from '@/config/paths'
import type { User } from '@/types/api'
import { useLogin } from '../api/login'
import { LegalDialog, type LegalDocument } from './legal-dialog'

const linkButton =
  'rounded font-medium text-indigo-600 hover:text-indigo-500 hover:underline dark:text-indigo-400 dark:hover:text-indigo-300'

/** Sign in with email and password (SPEC §2 Sign in). */
export function LoginForm({ onSuccess }: { onSuccess?: (user: User) => void }) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  // Shown as in the product; it changes nothing (SPEC §2).
  const [remember, setRemember] = useState(false)
  const [legal, setLegal] = useState<LegalDocument | null>(null)
  const login = useLogin({ onSuccess })

  const onSubmit = (event: FormEvent) => {
    event.preventDefault()
    if (login.isPending) return
    login.mutate({ email: email.trim(), password })
  }

  return (
    <>
      <form onSubmit={onSubmit} className="space-y-5">
        <Input
          label="Email address"
          name="email"
          type="email"
          autoComplete="email"
          placeholder="you@university.edu"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <PasswordInput
          label="Password"
          name="password"
          autoComplete="current-password"
          placeholder="Your password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <div className="flex items-center justify-between gap-4">
          <Checkbox label="Remember me" checked={remember} onChange={(e) => setRemember(e.target.checked)} />
          <button
            type="button"
            className={`text-sm ${linkButton}`}
            onClick={() =>
              toast('Password reset is coming soon. Until then, ask your instructor or an admin for help.', {
                icon: 'ℹ️',
              })
            }
          >
            Forgot password?
          </button>
        </div>
        <Button type="submit" size="lg" className="w-full" loading={login.isPending}>
          {login.isPending ? 'Signing in...' : 'Sign in'}
        </Button>
        <p className="text-center text-xs text-zinc-500 dark:text-zinc-400">
          By signing in you agree to our{' '}
          <button type="button" className={linkButton} onClick={() => setLegal('terms')}>
            Terms of Service
          </button>{' '}
          and{' '}
          <button type="button" className={linkButton} onClick={() => setLegal('privacy')}>
            Privacy Policy
          </button>
          .
        </p>
      </form>
      <LegalDialog document={legal} onClose={() => setLegal(null)} />
    </>
  )
}

export function LoginFooter() {
  return (
    <>
      New to Gantry?{' '}
      <Link to={paths.register.getHref()} className={linkButton}>
        Create an account
      </Link>
    </>
  )
}
