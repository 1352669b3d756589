// How a user's role and plan are shown (SPEC §3, §6): unknown or missing
// values fall back to student and Free with 3 projects and 5 deployments.
import {
  DEFAULT_MAX_DEPLOYMENTS,
  DEFAULT_MAX_PROJECTS,
  DEFAULT_PLAN,
  DEFAULT_ROLE,
  PLANS,
  ROLES,
} from '@/config/constants'
import type { Plan, Role, User } from '@/types/api'
import { capitalize } from './format'

export function roleOf(user: Pick<User, 'role'> | null | undefined): Role {
  const role = user?.role
  return (ROLES as readonly string[]).includes(role ?? '') ? (role as Role) : DEFAULT_ROLE
}

export function planOf(user: Pick<User, 'subscription'> | null | undefined): Plan {
  const plan = user?.subscription?.plan
  return (PLANS as readonly string[]).includes(plan ?? '') ? (plan as Plan) : DEFAULT_PLAN
}

export function planLabel(user: Pick<User, 'subscription'> | null | undefined): string {
  return capitalize(planOf(user))
}

export function planLimits(user: Pick<User, 'subscription'> | null | undefined): {
  maxProjects: number
  maxDeployments: number
} {
  const s = user?.subscription
  return {
    maxProjects: s?.maxProjects && s.maxProjects > 0 ? s.maxProjects : DEFAULT_MAX_PROJECTS,
    maxDeployments:
      s?.maxDeployments && s.maxDeployments > 0 ? s.maxDeployments : DEFAULT_MAX_DEPLOYMENTS,
  }
}

/** "3 projects · 5 deployments" */
export function planLimitsLabel(user: Pick<User, 'subscription'> | null | undefined): string {
  const { maxProjects, maxDeployments } = planLimits(user)
  return `${maxProjects} ${maxProjects === 1 ? 'project' : 'projects'} · ${maxDeployments} ${
    maxDeployments === 1 ? 'deployment' : 'deployments'
  }`
}
