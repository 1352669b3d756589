/** A custom domain's status (docs/api.md, "Custom domains"). */
export type DomainStatus = 'waiting_dns' | 'verified' | 'certificate_issued' | 'error'

export type DomainRedirect = 'none' | 'to-www' | 'to-apex'

/** One DNS record the owner creates at their DNS provider. */
export type DnsRecord = { type: string; name: string; value: string }

export type Domain = {
  _id: string
  project: string
  name: string
  apex: boolean
  primary: boolean
  redirect: DomainRedirect
  verificationToken: string
  status: DomainStatus
  /** What the last check found missing, and what to fix. */
  error: string
  nextCheckAt: string
  attempts: number
  verifiedAt: string | null
  createdAt: string
  records: DnsRecord[]
}
