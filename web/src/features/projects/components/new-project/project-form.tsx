import { useState, type FormEvent } from 'react'
import { Rocket } from 'lucide-react'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardFooter, CardHeader, CardTitle } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { Textarea } from '@/components/ui/textarea'
import { DEFAULT_BUILD } from '@/config/constants'
import type { NewProjectValues } from '../../prefill'
import { BuildSettingsFields } from '../build-settings-fields'

type ProjectFormProps = {
  initial: NewProjectValues
  /** Whether install, build and output can be set here (the public source). */
  withBuildSettings: boolean
  buildPlaceholder: string
  submitting: boolean
  /** Checks and creates; answers the message of a broken rule, if any. */
  onSubmit: (values: NewProjectValues) => string | null
  onCancel: () => void
}

/** Name, branch, description and build settings, then "Create & Deploy Project". */
export function ProjectForm({ initial, withBuildSettings, buildPlaceholder, submitting, onSubmit, onCancel }: ProjectFormProps) {
  const [values, setValues] = useState<NewProjectValues>(initial)
  const [nameError, setNameError] = useState<string>()
  const set = (field: keyof NewProjectValues, value: string) => {
    setValues((v) => ({ ...v, [field]: value }))
    if (field === 'name') setNameError(undefined)
  }

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const problem = onSubmit(values)
    if (problem && !values.name.trim()) setNameError(problem)
  }

  return (
    <Card>
      <form onSubmit={submit} noValidate>
        <CardHeader>
          <CardTitle>Configure project</CardTitle>
        </CardHeader>
        <CardContent className="space-y-5">
          <div className="grid gap-5 sm:grid-cols-2">
            <Input
              label="Project name"
              name="name"
              required
              value={values.name}
              onChange={(e) => set('name', e.target.value)}
              error={nameError}
              hint="Also names the site's subdomain."
              autoComplete="off"
            />
            <Input
              label="Branch"
              name="branch"
              value={values.branch}
              onChange={(e) => set('branch', e.target.value)}
              placeholder={DEFAULT_BUILD.branch}
              className="[&_input]:font-mono"
              autoComplete="off"
              spellCheck={false}
            />
          </div>
          <Textarea
            label="Description (optional)"
            name="description"
            value={values.description}
            onChange={(e) => set('description', e.target.value)}
            rows={2}
          />
          {withBuildSettings ? (
            <div>
              <h3 className="mb-3 text-sm font-semibold text-zinc-900 dark:text-zinc-50">Build settings</h3>
              <BuildSettingsFields values={values} onChange={set} buildPlaceholder={buildPlaceholder} />
            </div>
          ) : (
            <p className="text-sm text-zinc-600 dark:text-zinc-400">
              Build settings are detected from the repository; change them later in the project&apos;s settings.
            </p>
          )}
        </CardContent>
        <CardFooter className="flex-col-reverse items-stretch sm:flex-row sm:items-center sm:justify-end">
          <Button variant="ghost" onClick={onCancel} disabled={submitting}>
            Cancel
          </Button>
          <Button type="submit" loading={submitting} icon={<Rocket className="size-4" aria-hidden="true" />}>
            Create &amp; Deploy Project
          </Button>
        </CardFooter>
      </form>
    </Card>
  )
}
