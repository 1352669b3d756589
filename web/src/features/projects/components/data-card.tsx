import { useRef, useState } from 'react'
import toast from 'react-hot-toast'
import { Download, HardDrive, Upload } from 'lucide-react'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Skeleton } from '@/components/ui/skeleton'
import { formatDate, formatRelativeTime, formatSize } from '@/utils/format'
import {
  dataFolderLabel,
  downloadProjectData,
  useProjectData,
  useRestoreProjectData,
  type DataSnapshot,
} from '../api/get-data'

/** Download and restore of production's folder: a .tar.gz, restored while the app is stopped. */
function DataActions({
  projectId,
  hasData,
  snapshots,
}: {
  projectId: string
  hasData: boolean
  snapshots: DataSnapshot[]
}) {
  const [downloading, setDownloading] = useState(false)
  const restore = useRestoreProjectData(projectId)
  const input = useRef<HTMLInputElement>(null)
  const download = async () => {
    setDownloading(true)
    try {
      await downloadProjectData(projectId)
    } catch (err) {
      toast.error(err instanceof Error ? err.message : 'The data folder could not be downloaded')
    } finally {
      setDownloading(false)
    }
  }
  return (
    <div className="mt-4 flex flex-wrap items-center gap-2">
      <Button variant="secondary" size="sm" onClick={download} disabled={!hasData || downloading}>
        <Download className="size-4" aria-hidden="true" />
        {downloading ? 'Preparing download…' : 'Download data'}
      </Button>
      <Button variant="secondary" size="sm" onClick={() => input.current?.click()} disabled={!hasData || restore.isPending}>
        <Upload className="size-4" aria-hidden="true" />
        {restore.isPending ? 'Restoring…' : 'Restore from file'}
      </Button>
      <input
        ref={input}
        type="file"
        accept=".tar.gz,.tgz,application/gzip"
        className="sr-only"
        aria-label="Archive to restore"
        onChange={(e) => {
          const file = e.target.files?.[0]
          e.target.value = ''
          if (file) restore.mutate(file)
        }}
      />
      <p className="w-full text-xs text-zinc-500 dark:text-zinc-400">
        Restoring replaces production&apos;s folder with a .tar.gz like the download, or a daily snapshot: stop the
        app first.
      </p>
      {snapshots.length > 0 ? (
        <div className="w-full">
          <h3 className="mt-2 text-sm font-medium text-zinc-900 dark:text-zinc-100">Daily snapshots</h3>
          <ul className="mt-1 divide-y divide-zinc-100 dark:divide-zinc-800" aria-label="Snapshots">
            {snapshots.map((snap) => (
              <li key={snap.id} className="flex flex-wrap items-center justify-between gap-2 py-1.5">
                <span className="text-sm text-zinc-700 dark:text-zinc-300">
                  {formatDate(snap.at)}{' '}
                  {snap.bytes > 0 ? <span className="text-xs text-zinc-500">· {formatSize(snap.bytes)}</span> : null}
                </span>
                <Button
                  variant="ghost"
                  size="sm"
                  onClick={() => restore.mutate(snap)}
                  disabled={restore.isPending}
                  aria-label={`Restore the snapshot of ${formatDate(snap.at)}`}
                >
                  Restore
                </Button>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  )
}

/**
 * A project's persistent data folders (issue 28): what its server apps keep
 * in /data across deploys, restarts and sleep, and what each folder holds.
 */
export function DataCard({ projectId }: { projectId: string }) {
  const query = useProjectData(projectId)
  const data = query.data
  return (
    <Card className="mb-6" data-testid="data-card">
      <CardHeader>
        <CardTitle className="flex items-center gap-2">
          <HardDrive className="size-4 text-zinc-400" aria-hidden="true" />
          Data folder
        </CardTitle>
        <CardDescription>
          Server apps keep files in <code className="font-mono text-[0.85em]">{data?.mount ?? '/data'}</code> (also in{' '}
          <code className="font-mono text-[0.85em]">DATA_DIR</code>): they stay across deploys, restarts, sleep and
          rollbacks. Each preview gets a folder of its own. It counts in your storage.
        </CardDescription>
      </CardHeader>
      <CardContent>
        {query.isError ? (
          <p role="alert" className="text-sm text-red-600 dark:text-red-400">
            The data folder could not be loaded.
          </p>
        ) : query.isPending ? (
          <Skeleton aria-busy="true" aria-label="Loading the data folder" className="h-10" />
        ) : data && data.folders.length > 0 ? (
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" aria-label="Data folders">
            {data.folders.map((f) => (
              <li key={f.name} className="flex flex-wrap items-baseline justify-between gap-x-4 gap-y-1 py-2 first:pt-0 last:pb-0">
                <span className="min-w-0 truncate text-sm font-medium text-zinc-900 dark:text-zinc-100">
                  {dataFolderLabel(f.name)}
                </span>
                <span className="text-sm text-zinc-600 tabular-nums dark:text-zinc-400">
                  {formatSize(f.bytes)}
                  <span className="ml-2 text-xs text-zinc-500">measured {formatRelativeTime(f.measuredAt).toLowerCase()}</span>
                </span>
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            Nothing stored yet: the folder is made when a server app of this project first starts.
          </p>
        )}
        {data ? (
          <DataActions
            projectId={projectId}
            hasData={data.folders.some((f) => f.name === 'production')}
            snapshots={data.snapshots ?? []}
          />
        ) : null}
      </CardContent>
    </Card>
  )
}
