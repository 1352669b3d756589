// The roots of the query keys that another feature refreshes. Each feature's
// factory (features/<name>/api/keys.ts) starts its keys with its root here;
// a feature whose mutation changes another's data (a deploy changes a
// project's status and the storage usage shown on the profile) invalidates
// that root from here, since features do not import each other.
export const sharedKeys = {
  projects: ['projects'] as const,
  /** Approving a pull request builds a preview; the deployments feature lists it. */
  deployments: ['deployments'] as const,
  profile: ['profile'] as const,
}
