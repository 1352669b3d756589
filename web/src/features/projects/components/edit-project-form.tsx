import { useState, type FormEvent } from 'react'
import { Link, useNavigate } from 'react-router'
import { ExternalLink, Lightbulb, Lock } from 'lucide-react'
import { Badge } from '@/components/ui/badge'
import { Button, buttonClasses } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle } from '@/components/ui/card'
import { DetailList } from '@/components/ui/detail-list'
import { Input } from '@/components/ui/input'
import { Switch } from '@/components/ui/switch'
import { Textarea } from '@/components/ui/textarea'
import { paths } from '@/config/paths'
import { useUpdateProject } from '../api/update-project'
import type { Project } from '../types'
import { BuildSettingsFields, type BuildSettings } from './build-settings-fields'
import { EnvEditor } from './env-editor'
import { AlwaysOnSwitch } from './always-on'
import { ShowInDiscoverSwitch, showsInDiscover } from './show-in-discover'

export const EDIT_TIPS = [
  'Leave the build command empty for static sites.',
  'Common output directories are dist, build, .next and public.',
  'Use yarn (yarn install, yarn build) if your repository has a yarn.lock file.',
]

export const KEEP_DEV_DEPENDENCIES = 'Keep dev dependencies'

export const KEEP_DEV_DEPENDENCIES_HINT =
  'Node server apps: devDependencies are removed after the build to save storage, and put back if the app does not start without them. Turn this on if it loads one while it runs.'

/** The Project edit form (SPEC §2): editable settings, read-only repository, tips. */
export function EditProjectForm({ project }: { project: Project }) {
  const navigate = useNavigate()
  const [name, setName] = useState(project.name)
  const [branch, setBranch] = useState(project.branch)
  const [description, setDescription] = useState(project.description ?? '')
  const [showInDiscover, setShowInDiscover] = useState(showsInDiscover(project))
  const [alwaysOn, setAlwaysOn] = useState(Boolean(project.alwaysOn))
  const [build, setBuild] = useState<BuildSettings>({
    installCommand: project.buildConfig?.installCommand ?? '',
    buildCommand: project.buildConfig?.buildCommand ?? '',
    outputDirectory: project.buildConfig?.outputDirectory ?? '',
    startCommand: project.buildConfig?.startCommand ?? '',
  })
  const [keepDev, setKeepDev] = useState(Boolean(project.buildConfig?.keepDevDependencies))
  const update = useUpdateProject(project._id, {
    onSuccess: () => navigate(paths.project.getHref(project._id)),
  })

  const onSubmit = (event: FormEvent) => {
    event.preventDefault()
    update.mutate({
      name: name.trim(),
      description: description.trim(),
      branch: branch.trim(),
      buildConfig: {
        installCommand: build.installCommand.trim(),
        buildCommand: build.buildCommand.trim(),
        outputDirectory: build.outputDirectory.trim(),
        startCommand: build.startCommand.trim(),
        keepDevDependencies: keepDev,
      },
      showInDiscover,
      // Sent only when changed: the free plan is refused "always on".
      ...(alwaysOn !== Boolean(project.alwaysOn) ? { alwaysOn } : {}),
    })
  }

  const repo = project.repository
  return (
    <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_20rem]">
      <div className="min-w-0 space-y-6">
        <Card>
          <form onSubmit={onSubmit}>
            <CardHeader>
              <CardTitle>Project settings</CardTitle>
              <CardDescription>Changes apply to the next deployment.</CardDescription>
            </CardHeader>
            <CardContent className="space-y-5">
              <div className="grid gap-5 sm:grid-cols-2">
                <Input
                  label="Project name"
                  name="name"
                  required
                  value={name}
                  onChange={(e) => setName(e.target.value)}
                  autoComplete="off"
                />
                <Input
                  label="Branch"
                  name="branch"
                  value={branch}
                  onChange={(e) => setBranch(e.target.value)}
                  className="[&_input]:font-mono"
                  autoComplete="off"
                  spellCheck={false}
                />
              </div>
              <Textarea
                label="Description"
                name="description"
                value={description}
                onChange={(e) => setDescription(e.target.value)}
                rows={3}
              />
              <ShowInDiscoverSwitch
                checked={showInDiscover}
                onChange={setShowInDiscover}
                isPrivate={Boolean(project.repository?.private)}
              />
              <AlwaysOnSwitch checked={alwaysOn} onChange={setAlwaysOn} />
              <div>
                <h3 className="mb-3 text-sm font-semibold text-zinc-900 dark:text-zinc-50">Build settings</h3>
                <BuildSettingsFields values={build} onChange={(f, v) => setBuild((b) => ({ ...b, [f]: v }))} />
                <Switch
                  className="mt-5"
                  checked={keepDev}
                  onChange={setKeepDev}
                  label={KEEP_DEV_DEPENDENCIES}
                  hint={KEEP_DEV_DEPENDENCIES_HINT}
                />
              </div>
            </CardContent>
            <CardFooter className="justify-end">
              <Link to={paths.project.getHref(project._id)} className={buttonClasses({ variant: 'ghost' })}>
                Cancel
              </Link>
              <Button type="submit" loading={update.isPending}>
                {update.isPending ? 'Saving...' : 'Save Changes'}
              </Button>
            </CardFooter>
          </form>
        </Card>
        <EnvEditor projectId={project._id} />
      </div>

      <div className="space-y-6">
        <Card>
          <CardHeader>
            <CardTitle className="flex items-center gap-2">
              <Lock className="size-4 text-zinc-400" aria-hidden="true" />
              Repository
            </CardTitle>
            <CardDescription>The repository of a project cannot be changed.</CardDescription>
          </CardHeader>
          <CardContent>
            <DetailList
              items={[
                { label: 'Full name', value: repo.fullName || '—', mono: true },
                { label: 'Default branch', value: repo.defaultBranch || '—', mono: true },
                {
                  label: 'Visibility',
                  value: <Badge tone={repo.private ? 'warning' : 'neutral'}>{repo.private ? 'Private' : 'Public'}</Badge>,
                },
                {
                  label: 'URL',
                  value: repo.url ? (
                    <a
                      href={repo.url}
                      target="_blank"
                      rel="noopener noreferrer"
                      className="inline-flex items-center gap-1 rounded break-all text-indigo-600 hover:underline dark:text-indigo-400"
                    >
                      {repo.url.replace(/^https?:\/\//, '')}
                      <ExternalLink className="size-3.5 shrink-0" aria-hidden="true" />
                    </a>
                  ) : (
                    '—'
                  ),
                },
              ]}
              className="[&>div]:grid-cols-[6.5rem_minmax(0,1fr)]"
            />
          </CardContent>
        </Card>
        <Card className="border-amber-200 bg-amber-50/60 dark:border-amber-500/20 dark:bg-amber-500/5">
          <CardHeader>
            <CardTitle className="flex items-center gap-2">
              <Lightbulb className="size-4 text-amber-500" aria-hidden="true" />
              Tips
            </CardTitle>
          </CardHeader>
          <CardContent>
            <ul className="list-disc space-y-2 pl-5 text-sm text-zinc-700 dark:text-zinc-300">
              {EDIT_TIPS.map((tip) => (
                <li key={tip}>{tip}</li>
              ))}
            </ul>
          </CardContent>
        </Card>
      </div>
    </div>
  )
}
