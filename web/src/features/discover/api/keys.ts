export const discoverKeys = {
  all: ['discover'] as const,
  featured: (limit: number) => [...discoverKeys.all, 'featured', limit] as const,
}
