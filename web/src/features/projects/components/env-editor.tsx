import { useState, type FormEvent } from 'react'
import { KeyRound, Plus, Trash2 } from 'lucide-react'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle } from '@/components/ui/card'
import { Checkbox } from '@/components/ui/checkbox'
import { Input } from '@/components/ui/input'
import { Select } from '@/components/ui/select'
import { Skeleton } from '@/components/ui/skeleton'
import { useProjectEnv } from '../api/get-env'
import { useUpdateProjectEnv } from '../api/update-env'
import type { EnvScope, EnvVar } from '../types'

/**
 * One row of the editor. `stored` marks a secret whose value only the server knows, saved
 * under the name `storedKey`: an empty value keeps it only under that name.
 */
type Row = {
  id: number
  key: string
  value: string
  isSecret: boolean
  stored: boolean
  storedKey: string
  scope: EnvScope
}

/** Which deployments get a variable: every one (the default), production only or previews only. */
export const ENV_SCOPES: ReadonlyArray<{ value: EnvScope; label: string }> = [
  { value: 'all', label: 'All' },
  { value: 'production', label: 'Production' },
  { value: 'preview', label: 'Preview' },
]

function scopeOf(value: string | undefined): EnvScope {
  return value === 'production' || value === 'preview' ? value : 'all'
}

const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/
const RESERVED = new Set(['PORT', 'HOST', 'PATH', 'HOME', 'DATA_DIR'])

let nextRowId = 1
function toRows(vars: EnvVar[]): Row[] {
  return vars.map((v) => ({
    id: nextRowId++,
    key: v.key,
    value: v.isSecret ? '' : v.value,
    isSecret: v.isSecret,
    stored: v.isSecret,
    storedKey: v.key,
    scope: scopeOf(v.scope),
  }))
}

/** The problem with each row's name or value, by row id (none: valid). */
export function validateRows(rows: Row[]): Record<number, { key?: string; value?: string }> {
  const errors: Record<number, { key?: string; value?: string }> = {}
  const seen = new Set<string>()
  for (const row of rows) {
    const key = row.key.trim()
    if (!key) errors[row.id] = { key: 'Enter a name' }
    else if (!KEY_PATTERN.test(key)) errors[row.id] = { key: 'Letters, digits and underscores, not starting with a digit' }
    else if (RESERVED.has(key.toUpperCase())) errors[row.id] = { key: `${key} is set by Gantry` }
    else if (seen.has(key)) errors[row.id] = { key: `${key} is listed twice` }
    else if (row.stored && !row.isSecret && row.value === '')
      errors[row.id] = { value: `Enter the value of ${key} again to make it a plain variable` }
    else if (row.stored && row.isSecret && row.value === '' && key !== row.storedKey)
      errors[row.id] = { value: `Type the value of ${key} again: the saved secret stays with the name ${row.storedKey}` }
    else if (!row.stored && row.isSecret && row.value === '') errors[row.id] = { value: `Enter the value of ${key}` }
    seen.add(key)
  }
  return errors
}

/**
 * The Environment Variables card of the project edit screen: names, values
 * and a secret flag per variable, saved together. Secrets are never shown
 * again once saved: their field stays empty and keeps the stored value
 * unless a new one is typed.
 */
export function EnvEditor({ projectId }: { projectId: string }) {
  const env = useProjectEnv(projectId)
  return (
    <Card>
      <CardHeader>
        <CardTitle className="flex items-center gap-2">
          <KeyRound className="size-4 text-zinc-400" aria-hidden="true" />
          Environment Variables
        </CardTitle>
        <CardDescription>
          Given to the install, the build and the running app; changes apply to the next deployment. A scope limits a
          variable to production or to previews. Secret values are encrypted, hidden from logs and never shown again.
        </CardDescription>
      </CardHeader>
      {env.data ? (
        <EnvForm key={env.dataUpdatedAt} projectId={projectId} initial={env.data} />
      ) : env.isError ? (
        <CardContent>
          <p role="alert" className="text-sm text-red-600 dark:text-red-400">
            The environment variables could not be loaded.
          </p>
        </CardContent>
      ) : (
        <CardContent aria-busy="true" aria-label="Loading environment variables">
          <Skeleton className="h-10" />
        </CardContent>
      )}
    </Card>
  )
}

function EnvForm({ projectId, initial }: { projectId: string; initial: EnvVar[] }) {
  const [rows, setRows] = useState<Row[]>(() => toRows(initial))
  const [showErrors, setShowErrors] = useState(false)
  const save = useUpdateProjectEnv(projectId, {
    onSuccess: (saved) => {
      setRows(toRows(saved))
      setShowErrors(false)
    },
  })
  const errors = showErrors ? validateRows(rows) : {}

  const change = (id: number, patch: Partial<Row>) => setRows((rs) => rs.map((r) => (r.id === id ? { ...r, ...patch } : r)))
  const add = () => setRows((rs) => [...rs, { id: nextRowId++, key: '', value: '', isSecret: false, stored: false, storedKey: '', scope: 'all' }])
  const remove = (id: number) => setRows((rs) => rs.filter((r) => r.id !== id))

  const onSubmit = (event: FormEvent) => {
    event.preventDefault()
    if (Object.keys(validateRows(rows)).length > 0) {
      setShowErrors(true)
      return
    }
    save.mutate(rows.map((r) => ({ key: r.key.trim(), value: r.value, isSecret: r.isSecret, scope: r.scope })))
  }

  return (
    <form onSubmit={onSubmit} noValidate aria-label="Environment variables">
      <CardContent className="space-y-4">
        {rows.length === 0 ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">No variables yet.</p>
        ) : (
          <ul className="space-y-4">
            {rows.map((row, i) => {
              const name = row.key.trim() || `variable ${i + 1}`
              // A saved secret keeps its value only under the name it was saved with.
              const keepsSaved = row.stored && row.key.trim() === row.storedKey
              return (
                <li
                  key={row.id}
                  className="grid gap-3 rounded-lg border border-zinc-200 p-3 sm:grid-cols-2 sm:items-start dark:border-zinc-800"
                >
                  <Input
                    label="Name"
                    value={row.key}
                    onChange={(e) => change(row.id, { key: e.target.value })}
                    error={errors[row.id]?.key}
                    placeholder="DATABASE_URL"
                    autoComplete="off"
                    spellCheck={false}
                    className="[&_input]:font-mono"
                  />
                  <Input
                    label="Value"
                    type={row.isSecret ? 'password' : 'text'}
                    value={row.value}
                    onChange={(e) => change(row.id, { value: e.target.value })}
                    error={errors[row.id]?.value}
                    placeholder={keepsSaved ? 'Unchanged (hidden)' : ''}
                    hint={keepsSaved && row.isSecret ? 'Leave empty to keep the saved value' : undefined}
                    autoComplete="off"
                    spellCheck={false}
                    className="[&_input]:font-mono"
                  />
                  <div className="flex items-center justify-between gap-3 sm:col-span-2">
                    <div className="flex flex-wrap items-center gap-x-5 gap-y-2">
                      <Select
                        label="Scope"
                        inline
                        value={row.scope}
                        onChange={(e) => change(row.id, { scope: scopeOf(e.target.value) })}
                        options={ENV_SCOPES}
                        title={`Which deployments get ${name}`}
                      />
                      <Checkbox
                        label="Secret"
                        checked={row.isSecret}
                        onChange={(e) => change(row.id, { isSecret: e.target.checked })}
                      />
                    </div>
                    <Button
                      variant="ghost"
                      size="icon"
                      onClick={() => remove(row.id)}
                      aria-label={`Remove ${name}`}
                      title={`Remove ${name}`}
                      icon={<Trash2 className="size-4" aria-hidden="true" />}
                    />
                  </div>
                </li>
              )
            })}
          </ul>
        )}
        <Button variant="secondary" size="sm" onClick={add} icon={<Plus className="size-4" aria-hidden="true" />}>
          Add Variable
        </Button>
      </CardContent>
      <CardFooter className="justify-end">
        <Button type="submit" loading={save.isPending}>
          {save.isPending ? 'Saving...' : 'Save Variables'}
        </Button>
      </CardFooter>
    </form>
  )
}
