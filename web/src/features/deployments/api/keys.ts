import { sharedKeys } from '@/lib/query-keys'
import type { DeploymentsFilter } from './get-deployments'

export const deploymentKeys = {
  all: sharedKeys.deployments,
  lists: () => [...deploymentKeys.all, 'list'] as const,
  /** A list narrowed to one project and/or target (GET /api/deployments?projectId=…&target=…). */
  list: (filter: DeploymentsFilter) => [...deploymentKeys.lists(), filter] as const,
  details: () => [...deploymentKeys.all, 'detail'] as const,
  detail: (id: string) => [...deploymentKeys.details(), id] as const,
  /** A project's live previews (GET /api/projects/{id}/previews). */
  previews: (projectId: string) => [...deploymentKeys.all, 'previews', projectId] as const,
  /** Who can open a project's previews (GET /api/projects/{id}/preview-access). */
  previewAccess: (projectId: string) => [...deploymentKeys.all, 'preview-access', projectId] as const,
}
