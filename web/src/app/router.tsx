// The route table and redirect rules of SPEC §2.
//
// Logged-in users: / and unknown paths go to /dashboard; /login and
// /register go to /dashboard too. Visitors: unknown paths and logged-in-only
// screens go to /, except /dashboard, which asks them to log in. /discover
// and /github-callback are open to both. While the session found at start-up
// is checked, a neutral loader is shown so that no redirect flashes.
import { useState, type ReactNode } from 'react'
import {
  createBrowserRouter,
  Navigate,
  Outlet,
  RouterProvider,
  ScrollRestoration,
  type RouteObject,
} from 'react-router'
import { AppLayout } from '@/components/layouts/app-layout'
import { PublicLayout } from '@/components/layouts/public-layout'
import { FullPageLoader } from '@/components/ui/full-page-loader'
import { paths } from '@/config/paths'
import { NotificationBell } from '@/features/notifications/components/notification-bell'
import { PlanStorageUsage } from '@/features/profile/components/storage-usage'
import { useAuth } from '@/lib/auth'
import { DashboardLoginPrompt, DashboardRoute } from './routes/dashboard'
import { DeploymentDetailRoute } from './routes/deployment-detail'
import { DeploymentsRoute } from './routes/deployments'
import { DiscoverRoute } from './routes/discover'
import { GitHubCallbackRoute } from './routes/github-callback'
import { GitHubIntegrationRoute } from './routes/github-integration'
import { LandingRoute } from './routes/landing'
import { LoginRoute } from './routes/login'
import { NotificationsRoute } from './routes/notifications'
import { PreviewAccessRoute } from './routes/preview-access'
import { ProfileRoute } from './routes/profile'
import { EditProjectRoute } from './routes/project-edit'
import { ProjectDetailRoute } from './routes/project-detail'
import { NewProjectRoute } from './routes/project-new'
import { ProjectsRoute } from './routes/projects'
import { RegisterRoute } from './routes/register'
import { RouteError } from './routes/route-error'
import { SettingsRoute } from './routes/settings'

/** The logged-in frame with the notification bell and the plan's storage usage plugged in. */
function AppShell({ children }: { children: ReactNode }) {
  return (
    <AppLayout notifications={<NotificationBell />} planUsage={<PlanStorageUsage />}>
      {children}
    </AppLayout>
  )
}

/** Holds every route back until the start-up session check is done. */
function SessionGate() {
  const { initializing } = useAuth()
  if (initializing) return <FullPageLoader />
  return (
    <>
      <ScrollRestoration />
      <Outlet />
    </>
  )
}

/** Logged-in-only screens: visitors go to / (or where a deliberate sign-out asked). */
function RequireAuth() {
  const { user, status, signedOutTo } = useAuth()
  if (status === 'loading') return <FullPageLoader />
  if (!user) return <Navigate to={signedOutTo ?? paths.home.getHref()} replace />
  return (
    <AppShell>
      <Outlet />
    </AppShell>
  )
}

/** /login and /register: a logged-in user goes to /dashboard. */
function GuestOnly() {
  const { user } = useAuth()
  if (user) return <Navigate to={paths.dashboard.getHref()} replace />
  return (
    <PublicLayout>
      <Outlet />
    </PublicLayout>
  )
}

/** /: the landing page for visitors, the dashboard for users. */
function Home() {
  const { user } = useAuth()
  if (user) return <Navigate to={paths.dashboard.getHref()} replace />
  return (
    <PublicLayout>
      <LandingRoute />
    </PublicLayout>
  )
}

/** /dashboard: the dashboard for users, a login prompt for visitors. */
function Dashboard() {
  const { user, status } = useAuth()
  if (status === 'loading') return <FullPageLoader />
  if (!user) {
    return (
      <PublicLayout>
        <DashboardLoginPrompt />
      </PublicLayout>
    )
  }
  return (
    <AppShell>
      <DashboardRoute />
    </AppShell>
  )
}

/** Screens open to both: the app frame for users, the public one for visitors. */
function EitherLayout() {
  const { user } = useAuth()
  if (user) {
    return (
      <AppShell>
        <Outlet />
      </AppShell>
    )
  }
  return (
    <PublicLayout>
      <div className="mx-auto w-full max-w-6xl px-4 py-10 sm:px-6">
        <Outlet />
      </div>
    </PublicLayout>
  )
}

/** Unknown paths: /dashboard for users, / for visitors. */
function NotFound() {
  const { user } = useAuth()
  return <Navigate to={user ? paths.dashboard.getHref() : paths.home.getHref()} replace />
}

export const routes: RouteObject[] = [
  {
    element: <SessionGate />,
    errorElement: <RouteError />,
    children: [
      { path: paths.home.path, element: <Home /> },
      {
        element: <GuestOnly />,
        children: [
          { path: paths.login.path, element: <LoginRoute /> },
          { path: paths.register.path, element: <RegisterRoute /> },
        ],
      },
      { path: paths.githubCallback.path, element: <GitHubCallbackRoute /> },
      { path: paths.previewAccess.path, element: <PreviewAccessRoute /> },
      { path: paths.dashboard.path, element: <Dashboard /> },
      {
        element: <EitherLayout />,
        children: [{ path: paths.discover.path, element: <DiscoverRoute /> }],
      },
      {
        element: <RequireAuth />,
        children: [
          { path: paths.projects.path, element: <ProjectsRoute /> },
          { path: paths.newProject.path, element: <NewProjectRoute /> },
          { path: paths.project.path, element: <ProjectDetailRoute /> },
          { path: paths.editProject.path, element: <EditProjectRoute /> },
          { path: paths.deployments.path, element: <DeploymentsRoute /> },
          { path: paths.deployment.path, element: <DeploymentDetailRoute /> },
          { path: paths.profile.path, element: <ProfileRoute /> },
          { path: paths.settings.path, element: <SettingsRoute /> },
          { path: paths.githubIntegration.path, element: <GitHubIntegrationRoute /> },
          { path: paths.notifications.path, element: <NotificationsRoute /> },
        ],
      },
      { path: '*', element: <NotFound /> },
    ],
  },
]

export function AppRouter() {
  const [router] = useState(() => createBrowserRouter(routes))
  return <RouterProvider router={router} />
}
