import type { Project } from './types'

/**
 * The SPEC rule for a subdomain: the lowercased name with non-alphanumerics
 * replaced by hyphens (runs collapsed and trimmed, as the server does).
 */
export function subdomainFromName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
}

/** `<sub>.<host>` on the live-hosting domain, derived from where the app runs. */
export function liveURLFor(subdomain: string, location: Pick<Location, 'protocol' | 'hostname' | 'port'> = window.location): string {
  const port = location.port ? `:${location.port}` : ''
  return `${location.protocol}//${subdomain}.${location.hostname}${port}`
}

/**
 * Where a deployed project is live: the API's URL when it sent one, else
 * the active subdomain, the project's subdomain, or the SPEC name rule.
 */
export function projectLiveURL(
  project: Pick<Project, 'name' | 'activeDeployment' | 'subdomain'>,
  location?: Pick<Location, 'protocol' | 'hostname' | 'port'>,
): string {
  const active = project.activeDeployment
  if (active?.url) return active.url
  const sub = active?.subdomain || project.subdomain || subdomainFromName(project.name)
  return liveURLFor(sub, location)
}
