import { useState } from 'react'
import { useNavigate } from 'react-router'
import { LogOut } from 'lucide-react'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { ConfirmDialog } from '@/components/ui/dialog'
import { paths } from '@/config/paths'
import { useAuth } from '@/lib/auth'
import { useLogoutAll } from '../api/logout-all'

/**
 * "Sign out everywhere": ends every session of the account on the server,
 * this browser's included, after a confirmation; then forgets the local
 * session and goes to /login.
 */
export function SessionsCard() {
  const [confirming, setConfirming] = useState(false)
  const { forgetSession } = useAuth()
  const navigate = useNavigate()
  const logoutAll = useLogoutAll({
    onSuccess: () => {
      // Forget the session first (/login sends a signed-in user away), and
      // tell this screen's guard where to go.
      forgetSession({ redirectTo: paths.login.getHref() })
      navigate(paths.login.getHref(), { replace: true })
    },
  })
  const busy = logoutAll.isPending
  return (
    <Card>
      <CardHeader>
        <CardTitle>Sessions</CardTitle>
        <CardDescription>
          Signed in on a shared computer or a lost device? End every session of your account, this one included.
        </CardDescription>
      </CardHeader>
      <CardContent>
        <Button
          variant="secondary"
          size="sm"
          icon={<LogOut className="size-4" aria-hidden="true" />}
          onClick={() => setConfirming(true)}
          disabled={busy}
        >
          Sign out everywhere
        </Button>
      </CardContent>
      <ConfirmDialog
        open={confirming}
        title="Sign out everywhere?"
        message="Every browser and device signed in to your account will be signed out, this one included. You will need to sign in again."
        confirmLabel={busy ? 'Signing out...' : 'Sign out everywhere'}
        loading={busy}
        onConfirm={() => logoutAll.mutate()}
        onCancel={() => {
          if (!busy) setConfirming(false)
        }}
      />
    </Card>
  )
}
