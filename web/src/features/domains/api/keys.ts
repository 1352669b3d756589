import { sharedKeys } from '@/lib/query-keys'

export const domainKeys = {
  all: [...sharedKeys.projects, 'domains'] as const,
  list: (projectId: string) => [...domainKeys.all, projectId] as const,
}
