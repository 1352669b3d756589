import { useNavigate } from 'react-router'
import { paths } from '@/config/paths'
import { AuthCard } from '@/features/auth/components/auth-card'
import { RegisterFooter, RegisterForm } from '@/features/auth/components/register-form'

/** Sign up (SPEC §2). */
export function RegisterRoute() {
  const navigate = useNavigate()
  return (
    <>
      <title>Create account · Gantry</title>
      <AuthCard
        title="Create your account"
        description="Free for students and hobbyists. Your first deploy is minutes away."
        footer={<RegisterFooter />}
      >
        <RegisterForm onSuccess={() => navigate(paths.dashboard.getHref(), { replace: true })} />
      </AuthCard>
    </>
  )
}
