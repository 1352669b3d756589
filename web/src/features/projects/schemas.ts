// Rules of the New project screen (SPEC §5): a repository URL to load, a
// selected repository and a project name to create.
import { z } from 'zod'

export const repoUrlSchema = z.string().trim().min(1, 'Please enter a repository URL')

export const newProjectSchema = z.object({
  repository: z.unknown().refine((v) => v !== null && v !== undefined, 'Please select a repository'),
  name: z.string().trim().min(1, 'Project name is required'),
  branch: z.string().trim(),
  description: z.string().trim(),
})

/** The first rule a new project breaks, or null when it may be created. */
export function newProjectError(values: z.input<typeof newProjectSchema>): string | null {
  const result = newProjectSchema.safeParse(values)
  return result.success ? null : (result.error.issues[0]?.message ?? null)
}
