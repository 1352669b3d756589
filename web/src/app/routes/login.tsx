import { useNavigate } from 'react-router'
import { paths } from '@/config/paths'
import { AuthCard } from '@/features/auth/components/auth-card'
import { LoginFooter, LoginForm } from '@/features/auth/components/login-form'

/** Sign in (SPEC §2). */
export function LoginRoute() {
  const navigate = useNavigate()
  return (
    <>
      <title>Sign in · Gantry</title>
      <AuthCard title="Welcome back" description="Sign in to deploy and manage your projects." footer={<LoginFooter />}>
        <LoginForm onSuccess={() => navigate(paths.dashboard.getHref(), { replace: true })} />
      </AuthCard>
    </>
  )
}
