import { DEFAULT_BUILD } from '@/config/constants'
import type { RepoLookup } from './types'

export type NewProjectValues = {
  name: string
  branch: string
  description: string
  installCommand: string
  buildCommand: string
  outputDirectory: string
  startCommand: string
}

/** Whether the lookup suggested anything at all about building. */
export function lookupSuggestsBuild(lookup: RepoLookup): boolean {
  const bc = lookup.buildConfig ?? { installCommand: '', buildCommand: '', outputDirectory: '' }
  return Boolean(lookup.framework || bc.installCommand || bc.buildCommand || bc.outputDirectory || bc.startCommand)
}

/**
 * The form's first values from a lookup. When the lookup detected nothing,
 * the SPEC §9 defaults apply (branch main, output dist, install npm install);
 * what it detected is kept as is, empty commands included (a static site
 * has no build).
 */
export function prefillFromLookup(lookup: RepoLookup): NewProjectValues {
  const bc = lookup.buildConfig ?? { installCommand: '', buildCommand: '', outputDirectory: '' }
  const suggested = lookupSuggestsBuild(lookup)
  return {
    name: lookup.suggestedName || lookup.repository.name || '',
    branch: lookup.branch || lookup.repository.defaultBranch || DEFAULT_BUILD.branch,
    description: lookup.suggestedDescription || lookup.repository.description || '',
    installCommand: suggested ? (bc.installCommand ?? '') : DEFAULT_BUILD.installCommand,
    buildCommand: bc.buildCommand ?? '',
    outputDirectory: suggested ? (bc.outputDirectory ?? '') : DEFAULT_BUILD.outputDirectory,
    startCommand: bc.startCommand ?? '',
  }
}

/** The build command's placeholder: "npm run build" only when the lookup gave nothing. */
export function buildPlaceholderFor(lookup: RepoLookup | null): string {
  if (!lookup || !lookupSuggestsBuild(lookup)) return DEFAULT_BUILD.buildCommandPlaceholder
  return lookup.buildConfig?.buildCommand ? '' : 'No build step'
}

/** "owner/repo" guessed from a pasted URL, for the summary while it loads. */
export function repoNameFromURL(url: string): string {
  const trimmed = url.trim().replace(/^[a-z]+:\/\//i, '').replace(/\/tree\/.*$/, '').replace(/\/+$/, '').replace(/\.git$/, '')
  const parts = trimmed.split('/').filter(Boolean)
  return parts.length >= 3 ? parts.slice(-2).join('/') : trimmed
}
