export const logKeys = {
  all: ['logs'] as const,
  list: (deploymentId: string) => [...logKeys.all, deploymentId] as const,
}
