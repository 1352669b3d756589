import { useState } from 'react'
import { GitBranch, Globe } from 'lucide-react'
import toast from 'react-hot-toast'
import { SegmentedControl } from '@/components/ui/segmented-control'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { DEFAULT_BUILD } from '@/config/constants'
import { errorMessage } from '@/lib/api-client'
import type { GitHubRepo, User } from '@/types/api'
import { useCreateProject } from '../../api/create-project'
import { useLookupPublicRepo, useRepoDetection } from '../../api/lookup-public-repo'
import { buildPlaceholderFor, prefillFromLookup, repoNameFromURL, type NewProjectValues } from '../../prefill'
import { newProjectError } from '../../schemas'
import type { Project, RepoLookup } from '../../types'
import { GitHubRepoPicker } from './github-repo-picker'
import { GitHubRequired } from './github-required'
import { ProjectForm } from './project-form'
import { PublicRepoLoader } from './public-repo-loader'
import { RepoSummary } from './repo-summary'

export type Source = 'github' | 'public'

const SOURCES = [
  { value: 'github', label: 'My GitHub Repositories', icon: <GitBranch className="size-4" aria-hidden="true" /> },
  { value: 'public', label: 'Any Public Repository', icon: <Globe className="size-4" aria-hidden="true" /> },
] as const

type NewProjectProps = {
  user: User
  /** A repository id from ?repo= to preselect. */
  preselectRepoId?: string | null
  /** The project exists: the caller starts its deployment. */
  onCreated: (project: Project) => void
  onCancel: () => void
  /** True while the caller is busy after creation (deploying, redirecting). */
  busy?: boolean
}

/** The New project screen (SPEC §2): choose a source and a repository, configure, create. */
export function NewProject({ user, preselectRepoId, onCreated, onCancel, busy }: NewProjectProps) {
  const repos = user.github?.repos ?? []
  const connected = Boolean(user.github?.connected)
  const preselected = preselectRepoId ? repos.find((r) => String(r.id) === String(preselectRepoId)) : undefined

  const [source, setSource] = useState<Source>('github')
  const [githubRepo, setGithubRepo] = useState<GitHubRepo | null>(preselected ?? null)
  const [lookup, setLookup] = useState<RepoLookup | null>(null)
  const [pendingURL, setPendingURL] = useState<string | null>(null)
  const load = useLookupPublicRepo({ onSuccess: setLookup })
  const create = useCreateProject()

  // Detection for a GitHub repository, quietly: it only fills "Framework".
  const detect = useRepoDetection(githubRepo?.url)

  const selected = source === 'github' ? githubRepo : lookup
  const reset = () => {
    setGithubRepo(null)
    setLookup(null)
    setPendingURL(null)
    load.reset()
  }

  const submit = (values: NewProjectValues): string | null => {
    const problem = newProjectError({
      repository: selected,
      name: values.name,
      branch: values.branch,
      description: values.description,
    })
    if (problem) {
      toast.error(problem)
      return problem
    }
    const onError = (err: unknown) => toast.error(errorMessage(err, 'Failed to create project'))
    const onSuccess = (project: Project) => {
      toast.success('Project created successfully!')
      onCreated(project)
    }
    const common = {
      name: values.name.trim(),
      description: values.description.trim(),
      branch: values.branch.trim() || DEFAULT_BUILD.branch,
    }
    if (source === 'public' && lookup) {
      create.mutate(
        {
          source: 'public',
          repository: { url: lookup.repository.url },
          ...common,
          buildConfig: {
            installCommand: values.installCommand.trim(),
            buildCommand: values.buildCommand.trim(),
            outputDirectory: values.outputDirectory.trim(),
            startCommand: values.startCommand.trim(),
          },
        },
        { onSuccess, onError },
      )
    } else if (githubRepo) {
      create.mutate({ source: 'github', repositoryId: githubRepo.id, ...common }, { onSuccess, onError })
    }
    return null
  }

  const submitting = create.isPending || Boolean(busy)

  let body
  if (source === 'github' && !connected) {
    body = <GitHubRequired onUsePublic={() => setSource('public')} />
  } else if (source === 'github' && !githubRepo) {
    body = (
      <Card>
        <CardHeader>
          <CardTitle>Choose a repository</CardTitle>
          <CardDescription>Repositories of {user.github?.username ? `@${user.github.username}` : 'your GitHub account'}.</CardDescription>
        </CardHeader>
        <CardContent>
          <GitHubRepoPicker repos={repos} onSelect={setGithubRepo} />
        </CardContent>
      </Card>
    )
  } else if (source === 'github' && githubRepo) {
    body = (
      <div className="space-y-6">
        <RepoSummary
          fullName={githubRepo.fullName}
          description={githubRepo.description}
          defaultBranch={githubRepo.defaultBranch}
          private={githubRepo.private}
          framework={detect.isPending ? null : (detect.data?.framework ?? '')}
          onChange={reset}
        />
        <ProjectForm
          key={githubRepo.id}
          initial={{
            name: githubRepo.name,
            branch: githubRepo.defaultBranch || DEFAULT_BUILD.branch,
            description: githubRepo.description ?? '',
            installCommand: '',
            buildCommand: '',
            outputDirectory: '',
            startCommand: '',
          }}
          withBuildSettings={false}
          buildPlaceholder={DEFAULT_BUILD.buildCommandPlaceholder}
          submitting={submitting}
          onSubmit={submit}
          onCancel={onCancel}
        />
      </div>
    )
  } else if (lookup) {
    body = (
      <div className="space-y-6">
        <RepoSummary
          fullName={lookup.repository.fullName}
          description={lookup.repository.description}
          defaultBranch={lookup.repository.defaultBranch}
          private={lookup.repository.private}
          framework={lookup.framework ?? ''}
          detectError={lookup.detectError}
          onChange={reset}
        />
        <ProjectForm
          key={lookup.repository.url}
          initial={prefillFromLookup(lookup)}
          withBuildSettings
          buildPlaceholder={buildPlaceholderFor(lookup)}
          submitting={submitting}
          onSubmit={submit}
          onCancel={onCancel}
        />
      </div>
    )
  } else {
    body = (
      <div className="space-y-6">
        <Card>
          <CardHeader>
            <CardTitle>Import a public repository</CardTitle>
            <CardDescription>Paste the address of any public git repository.</CardDescription>
          </CardHeader>
          <CardContent>
            <PublicRepoLoader
              loading={load.isPending}
              onLoad={(url) => {
                setPendingURL(url)
                load.mutate(url)
              }}
            />
          </CardContent>
        </Card>
        {load.isPending && pendingURL ? (
          <RepoSummary fullName={repoNameFromURL(pendingURL)} framework={null} onChange={reset} />
        ) : null}
      </div>
    )
  }

  return (
    <div className="space-y-6">
      <SegmentedControl
        label="Repository source"
        value={source}
        onChange={(next) => {
          setSource(next)
        }}
        options={SOURCES}
        stretch
      />
      {body}
    </div>
  )
}
