// Display names of the SPEC §3 project types.
const NAMES: Record<string, string> = {
  github: 'GitHub',
  react: 'React',
  vue: 'Vue',
  nextjs: 'Next.js',
  nuxt: 'Nuxt',
  angular: 'Angular',
  svelte: 'Svelte',
  sveltekit: 'SvelteKit',
  python: 'Python',
  nodejs: 'Node.js',
  static: 'Static',
  vanilla: 'Vanilla JS',
  flask: 'Flask',
  django: 'Django',
  express: 'Express',
  html: 'HTML',
  css: 'CSS',
  javascript: 'JavaScript',
  typescript: 'TypeScript',
  php: 'PHP',
  java: 'Java',
  csharp: 'C#',
  go: 'Go',
  rust: 'Rust',
  vite: 'Vite',
  astro: 'Astro',
  gatsby: 'Gatsby',
  hugo: 'Hugo',
}

export function frameworkName(type: string | undefined | null): string {
  if (!type) return ''
  return NAMES[type] ?? type.charAt(0).toUpperCase() + type.slice(1)
}
