import { sharedKeys } from '@/lib/query-keys'

export const projectKeys = {
  all: sharedKeys.projects,
  lists: () => [...projectKeys.all, 'list'] as const,
  details: () => [...projectKeys.all, 'detail'] as const,
  detail: (id: string) => [...projectKeys.details(), id] as const,
  env: (id: string) => [...projectKeys.detail(id), 'env'] as const,
  /** The apps' persistent data folders (GET /api/projects/{id}/data). */
  data: (id: string) => [...projectKeys.detail(id), 'data'] as const,
  /** The GitHub webhook and pull requests of a project (GET /api/projects/{id}/github). */
  github: (id: string) => [...projectKeys.detail(id), 'github'] as const,
  /** What a repository's lookup detected (framework, build settings), by its URL. */
  detection: (repoUrl: string) => [...projectKeys.all, 'detect', repoUrl] as const,
}
