import { KeyRound, ScrollText } from 'lucide-react'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { DetailList } from '@/components/ui/detail-list'
import { EmptyState } from '@/components/ui/empty-state'
import { DEFAULT_BUILD } from '@/config/constants'
import { capitalize, formatDateTime, formatDuration, formatKB, formatSize } from '@/utils/format'
import { shortHash } from '../status'
import { targetLabel, triggerLabel } from '../trigger'
import type { BuildLog, Deployment } from '../types'

const dash = (value: string | undefined | null) => value || '—'

export function ProjectBuildConfigCard({ deployment }: { deployment: Deployment }) {
  const bc = deployment.project?.buildConfig ?? {}
  const items = [
    { label: 'Install command', value: bc.installCommand || 'Not specified', mono: Boolean(bc.installCommand) },
    { label: 'Build command', value: bc.buildCommand || 'Not specified', mono: Boolean(bc.buildCommand) },
    { label: 'Output directory', value: bc.outputDirectory || 'Not specified', mono: Boolean(bc.outputDirectory) },
  ]
  if (bc.startCommand) items.push({ label: 'Start command', value: bc.startCommand, mono: true })
  const framework = deployment.buildInfo?.framework || deployment.project?.type
  if (framework) items.push({ label: 'Framework', value: capitalize(framework), mono: false })
  return (
    <Card>
      <CardHeader>
        <CardTitle>Project Build Configuration</CardTitle>
      </CardHeader>
      <CardContent>
        <DetailList items={items} />
      </CardContent>
    </Card>
  )
}

export function BuildInfoCard({ deployment }: { deployment: Deployment }) {
  const info = deployment.buildInfo ?? {}
  return (
    <Card>
      <CardHeader>
        <CardTitle>Build Information</CardTitle>
      </CardHeader>
      <CardContent>
        <DetailList
          items={[
            { label: 'Started', value: dash(formatDateTime(info.startTime)) },
            { label: 'Finished', value: dash(formatDateTime(info.endTime)) },
            { label: 'Duration', value: info.duration ? formatDuration(info.duration) : '—' },
            { label: 'Build size', value: info.buildSize ? formatKB(info.buildSize) : '—' },
            {
              label: 'Storage',
              value: deployment.prunedAt
                ? 'Files removed to save space'
                : formatSize((deployment.filesSize ?? 0) + (deployment.logSize ?? 0)),
            },
            { label: 'Output', value: info.outputDirectory || DEFAULT_BUILD.outputDirectory, mono: true },
          ]}
        />
      </CardContent>
    </Card>
  )
}

export function CommitInfoCard({ deployment }: { deployment: Deployment }) {
  const meta = deployment.metadata ?? {}
  return (
    <Card>
      <CardHeader>
        <CardTitle>Commit Information</CardTitle>
      </CardHeader>
      <CardContent>
        <DetailList
          items={[
            {
              label: 'Repository',
              value: dash(meta.repository?.fullName || deployment.project?.repository?.fullName),
              mono: true,
            },
            { label: 'Branch', value: dash(meta.branch), mono: true },
            { label: 'Commit', value: dash(shortHash(meta.commitHash)), mono: true },
            { label: 'Message', value: dash(meta.commitMessage) },
            { label: 'Author', value: dash(meta.author) },
            { label: 'Trigger', value: triggerLabel(deployment) },
            { label: 'Target', value: targetLabel(deployment) },
            ...(deployment.promotedAt
              ? [{ label: 'Promoted', value: formatDateTime(deployment.promotedAt) || '—' }]
              : []),
          ]}
        />
      </CardContent>
    </Card>
  )
}

const levelColour: Record<string, string> = {
  info: 'text-sky-300',
  warning: 'text-amber-300',
  error: 'text-red-400',
  success: 'text-emerald-400',
}

/** The build log stored with the deployment, with its entry count. */
export function BuildLogsCard({ logs }: { logs: BuildLog[] | undefined }) {
  const list = logs ?? []
  return (
    <Card className="overflow-hidden">
      <CardHeader className="flex-row items-center justify-between pb-4">
        <CardTitle>Build Logs</CardTitle>
        <span className="text-xs text-zinc-500 dark:text-zinc-400">
          {list.length} {list.length === 1 ? 'entry' : 'entries'}
        </span>
      </CardHeader>
      {list.length === 0 ? (
        <CardContent className="pt-0">
          <EmptyState icon={ScrollText} title="No build logs yet" description="Lines appear here as the build runs." className="py-8" />
        </CardContent>
      ) : (
        <ol className="max-h-72 overflow-y-auto border-t border-zinc-200 bg-zinc-900 py-2 font-mono text-xs leading-5 dark:border-zinc-800 dark:bg-black">
          {list.map((log, i) => (
            <li key={log.seq ?? i} className="flex gap-3 px-4">
              <span className={`w-14 shrink-0 font-semibold uppercase ${levelColour[log.level] ?? 'text-zinc-400'}`}>
                {log.level === 'warning' ? 'warn' : log.level}
              </span>
              <span className="min-w-0 break-words whitespace-pre-wrap text-zinc-200">{log.message}</span>
            </li>
          ))}
        </ol>
      )}
    </Card>
  )
}

export function EnvironmentCard({ deployment }: { deployment: Deployment }) {
  const vars = deployment.environment?.variables ?? []
  return (
    <Card>
      <CardHeader>
        <CardTitle>Environment Variables</CardTitle>
      </CardHeader>
      <CardContent>
        {vars.length === 0 ? (
          <EmptyState
            icon={KeyRound}
            title="No environment variables"
            description="This deployment runs without extra variables."
            className="py-8"
          />
        ) : (
          <ul className="divide-y divide-zinc-100 font-mono text-sm dark:divide-zinc-800">
            {vars.map((v) => (
              <li key={v.key} className="flex flex-wrap items-center gap-x-3 gap-y-1 py-2 first:pt-0 last:pb-0">
                <span className="font-medium text-zinc-900 dark:text-zinc-100">{v.key}</span>
                <span className="min-w-0 break-all text-zinc-600 dark:text-zinc-400">
                  {v.isSecret ? '••••••••' : v.value}
                </span>
                {v.isSecret ? (
                  <span className="ml-auto font-sans text-xs text-zinc-500 dark:text-zinc-400">Secret</span>
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </CardContent>
    </Card>
  )
}
