import { useState, type FormEvent } from 'react'
import toast from 'react-hot-toast'
import { Check, Copy, ExternalLink, Globe, Plus, RefreshCw, Star, Trash2 } from 'lucide-react'
import { Badge, type BadgeTone } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { ConfirmDialog } from '@/components/ui/dialog'
import { Input } from '@/components/ui/input'
import { Select } from '@/components/ui/select'
import { Skeleton } from '@/components/ui/skeleton'
import { useAddDomain } from '../api/add-domain'
import { useDomains } from '../api/get-domains'
import { useRemoveDomain } from '../api/remove-domain'
import { useSetPrimaryDomain } from '../api/set-primary-domain'
import { useUpdateDomainRedirect } from '../api/update-domain'
import { useVerifyDomain } from '../api/verify-domain'
import { domainNameError } from '../schemas'
import type { DnsRecord, Domain, DomainRedirect, DomainStatus } from '../types'

const STATUS: Record<DomainStatus, { label: string; tone: BadgeTone; pulse?: boolean }> = {
  waiting_dns: { label: 'Waiting for DNS', tone: 'warning', pulse: true },
  verified: { label: 'Verified', tone: 'info' },
  certificate_issued: { label: 'Certificate issued', tone: 'success' },
  error: { label: 'Error', tone: 'danger' },
}

export function DomainStatusBadge({ status }: { status: DomainStatus }) {
  const s = STATUS[status] ?? { label: status, tone: 'neutral' as BadgeTone }
  return (
    <Badge tone={s.tone} dot pulse={s.pulse}>
      {s.label}
    </Badge>
  )
}

export const REMOVE_DOMAIN_CONFIRMATION = (name: string) =>
  `Remove ${name}? The platform stops serving your site on it at once.`

function serving(d: Domain) {
  return d.status === 'verified' || d.status === 'certificate_issued'
}

/** The name an apex ↔ www redirect points at, or null when the domain has no pair. */
function wwwPair(d: Domain): string | null {
  if (d.apex) return `www.${d.name}`
  return d.name.startsWith('www.') ? d.name.slice(4) : null
}

/**
 * The Domains card of Project detail: the project's own URL on the live
 * domain, its custom domains with their status, the DNS records each needs
 * (to copy), and add, remove, set primary, redirect and check now. The
 * list polls while a domain waits for its records.
 */
export function DomainsCard({ projectId, liveUrl }: { projectId: string; liveUrl: string }) {
  const domains = useDomains(projectId)
  const [confirm, setConfirm] = useState<Domain | null>(null)
  const remove = useRemoveDomain(projectId, { onSuccess: () => setConfirm(null) })
  const list = domains.data ?? []
  return (
    <Card className="mb-6">
      <CardHeader>
        <CardTitle className="flex items-center gap-2">
          <Globe className="size-4 text-zinc-400" aria-hidden="true" />
          Domains
        </CardTitle>
        <CardDescription>Where your production deployment is served.</CardDescription>
      </CardHeader>
      <CardContent className="space-y-5">
        <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
          <span className="text-zinc-600 dark:text-zinc-400">Gantry URL</span>
          <a
            href={liveUrl}
            target="_blank"
            rel="noopener noreferrer"
            className="inline-flex min-w-0 items-center gap-1 rounded font-mono break-all text-indigo-600 hover:underline dark:text-indigo-400"
          >
            {liveUrl}
            <ExternalLink className="size-3.5 shrink-0" aria-hidden="true" />
          </a>
        </div>

        {domains.isPending ? (
          <Skeleton className="h-24 w-full" />
        ) : list.length === 0 ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            No custom domains yet. Add one you own, such as www.example.com.
          </p>
        ) : (
          <ul className="space-y-4" aria-label="Custom domains">
            {list.map((d) => (
              <DomainItem key={d._id} projectId={projectId} domain={d} all={list} onRemove={() => setConfirm(d)} />
            ))}
          </ul>
        )}

        <AddDomainForm projectId={projectId} />
      </CardContent>
      <ConfirmDialog
        open={confirm !== null}
        title="Remove domain"
        message={confirm ? REMOVE_DOMAIN_CONFIRMATION(confirm.name) : ''}
        confirmLabel="Remove"
        loading={remove.isPending}
        onConfirm={() => confirm && remove.mutate(confirm._id)}
        onCancel={() => setConfirm(null)}
      />
    </Card>
  )
}

function DomainItem({
  projectId,
  domain: d,
  all,
  onRemove,
}: {
  projectId: string
  domain: Domain
  all: Domain[]
  onRemove: () => void
}) {
  const primary = useSetPrimaryDomain(projectId)
  const verify = useVerifyDomain(projectId)
  const redirect = useUpdateDomainRedirect(projectId)
  const pair = wwwPair(d)
  const pairAdded = pair !== null && all.some((o) => o.name === pair)
  const live = serving(d)
  return (
    <li className="rounded-lg border border-zinc-200 p-4 dark:border-zinc-800" data-testid="domain-item">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0 space-y-1">
          <div className="flex flex-wrap items-center gap-2">
            {live ? (
              <a
                href={`${window.location.protocol}//${d.name}`}
                target="_blank"
                rel="noopener noreferrer"
                className="font-mono text-sm font-medium break-all text-zinc-900 hover:underline dark:text-zinc-50"
              >
                {d.name}
              </a>
            ) : (
              <span className="font-mono text-sm font-medium break-all text-zinc-900 dark:text-zinc-50">{d.name}</span>
            )}
            <DomainStatusBadge status={d.status} />
            {d.primary && <Badge tone="accent">Primary</Badge>}
          </div>
          {d.error && (
            <p
              className={
                d.status === 'error'
                  ? 'text-sm [overflow-wrap:anywhere] text-red-700 dark:text-red-300'
                  : 'text-sm [overflow-wrap:anywhere] text-zinc-600 dark:text-zinc-400'
              }
            >
              <span className="font-medium">{d.status === 'error' ? 'What to fix: ' : 'Still missing: '}</span>
              {d.error}
            </p>
          )}
        </div>
        <div className="flex flex-wrap gap-2">
          {!live && (
            <Button
              size="sm"
              variant="secondary"
              icon={<RefreshCw className="size-3.5" aria-hidden="true" />}
              loading={verify.isPending}
              onClick={() => verify.mutate(d._id)}
            >
              Check now
            </Button>
          )}
          {!d.primary && (
            <Button
              size="sm"
              variant="secondary"
              icon={<Star className="size-3.5" aria-hidden="true" />}
              loading={primary.isPending}
              onClick={() => primary.mutate(d._id)}
            >
              Set primary
            </Button>
          )}
          <Button
            size="sm"
            variant="ghost"
            className="text-red-600 hover:text-red-700 dark:text-red-400 dark:hover:text-red-300"
            icon={<Trash2 className="size-3.5" aria-hidden="true" />}
            onClick={onRemove}
            aria-label={`Remove ${d.name}`}
          >
            Remove
          </Button>
        </div>
      </div>

      {!live && <RecordsTable records={d.records} />}

      {pair !== null &&
        (pairAdded || d.redirect !== 'none' ? (
          <Select
            label="Redirect"
            className="mt-3 max-w-xs"
            value={d.redirect}
            disabled={redirect.isPending}
            onChange={(e) => redirect.mutate({ domainId: d._id, redirect: e.target.value as DomainRedirect })}
            options={[
              { value: 'none', label: 'Serve the site here' },
              { value: d.apex ? 'to-www' : 'to-apex', label: `Redirect to ${pair}` },
            ]}
          />
        ) : (
          <p className="mt-3 text-xs text-zinc-500 dark:text-zinc-400">
            Add {pair} too to redirect one of the two names to the other.
          </p>
        ))}
    </li>
  )
}

/** The records to create, each value with a Copy button. */
function RecordsTable({ records }: { records: DnsRecord[] }) {
  return (
    <div className="mt-3">
      <p className="mb-2 text-sm text-zinc-600 dark:text-zinc-400">Create these records at your DNS provider:</p>
      {/* Phones: one block per record; wider screens: the table. */}
      <ul className="divide-y divide-zinc-200 rounded-lg border border-zinc-200 sm:hidden dark:divide-zinc-800 dark:border-zinc-800">
        {records.map((r) => (
          <li key={`${r.type} ${r.name} ${r.value}`} className="space-y-1.5 px-3 py-2.5">
            <span className="font-mono text-xs font-semibold text-zinc-700 dark:text-zinc-300">{r.type}</span>
            <dl className="space-y-1 text-xs">
              <div>
                <dt className="text-zinc-500 dark:text-zinc-400">Name</dt>
                <dd>
                  <CopyValue value={r.name} label={`Copy ${r.type} name`} />
                </dd>
              </div>
              <div>
                <dt className="text-zinc-500 dark:text-zinc-400">Value</dt>
                <dd>
                  <CopyValue value={r.value} label={`Copy ${r.type} value`} />
                </dd>
              </div>
            </dl>
          </li>
        ))}
      </ul>
      <div className="hidden overflow-x-auto rounded-lg border border-zinc-200 sm:block dark:border-zinc-800">
        <table className="w-full text-left text-sm">
          <thead className="bg-zinc-50 text-xs text-zinc-600 uppercase dark:bg-zinc-800/60 dark:text-zinc-400">
            <tr>
              <th scope="col" className="px-3 py-2 font-medium">
                Type
              </th>
              <th scope="col" className="px-3 py-2 font-medium">
                Name
              </th>
              <th scope="col" className="px-3 py-2 font-medium">
                Value
              </th>
            </tr>
          </thead>
          <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
            {records.map((r) => (
              <tr key={`${r.type} ${r.name} ${r.value}`}>
                <td className="px-3 py-2 font-mono text-xs font-semibold text-zinc-700 dark:text-zinc-300">{r.type}</td>
                <td className="px-3 py-2">
                  <CopyValue value={r.name} label={`Copy ${r.type} name`} />
                </td>
                <td className="px-3 py-2">
                  <CopyValue value={r.value} label={`Copy ${r.type} value`} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  )
}

function CopyValue({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value)
      setCopied(true)
      toast.success('Copied')
      setTimeout(() => setCopied(false), 1500)
    } catch {
      toast.error('Could not copy: select the text and copy it')
    }
  }
  return (
    <span className="flex items-center gap-1">
      <code className="font-mono text-xs [overflow-wrap:anywhere] text-zinc-900 dark:text-zinc-100">{value}</code>
      <button
        type="button"
        onClick={copy}
        aria-label={label}
        title={label}
        className="shrink-0 rounded p-1 text-zinc-500 hover:bg-zinc-100 hover:text-zinc-900 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:text-zinc-400 dark:hover:bg-zinc-800 dark:hover:text-zinc-50"
      >
        {copied ? <Check className="size-3.5" aria-hidden="true" /> : <Copy className="size-3.5" aria-hidden="true" />}
      </button>
    </span>
  )
}

function AddDomainForm({ projectId }: { projectId: string }) {
  const [name, setName] = useState('')
  const [error, setError] = useState<string | undefined>()
  const add = useAddDomain(projectId, { onSuccess: () => setName('') })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    const problem = domainNameError(name)
    setError(problem ?? undefined)
    if (!problem) add.mutate(name.trim())
  }
  return (
    <form onSubmit={submit} noValidate className="flex flex-col gap-2 sm:flex-row sm:items-start">
      <Input
        label="Add a domain"
        placeholder="www.example.com"
        value={name}
        onChange={(e) => {
          setName(e.target.value)
          if (error) setError(undefined)
        }}
        error={error}
        className="flex-1"
        autoCapitalize="none"
        autoCorrect="off"
        spellCheck={false}
      />
      <Button type="submit" loading={add.isPending} icon={<Plus className="size-4" aria-hidden="true" />} className="sm:mt-7">
        Add
      </Button>
    </form>
  )
}
