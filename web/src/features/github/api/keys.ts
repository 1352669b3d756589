// Keys of the GitHub feature. The account and its repositories live on the
// session's user (sessionKeys.me); these key the mutations.
export const githubKeys = {
  all: ['github'] as const,
  connect: () => [...githubKeys.all, 'connect'] as const,
  refresh: () => [...githubKeys.all, 'refresh'] as const,
  disconnect: () => [...githubKeys.all, 'disconnect'] as const,
}
