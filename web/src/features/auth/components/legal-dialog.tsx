import { Button } from '@/components/ui/button'
import { Dialog } from '@/components/ui/dialog'

export type LegalDocument = 'terms' | 'privacy'

const documents: Record<LegalDocument, { title: string; paragraphs: string[] }> = {
  terms: {
    title: 'Terms of Service',
    paragraphs: [
      'Gantry hosts web projects for learning, portfolios and hobbies. You keep the rights to your code; you give us permission to build it and serve it on your subdomain.',
      'Only deploy code you are allowed to publish. Apps that attack others, mine cryptocurrency, host malware or break the law are removed without notice.',
      'The free plan has limits on projects and deployments and comes without a guarantee of availability. We may stop deployments that harm the platform.',
    ],
  },
  privacy: {
    title: 'Privacy Policy',
    paragraphs: [
      'We store your name, username, email address and a hash of your password, plus the projects, deployments and logs you create.',
      'If you connect GitHub, we keep an access token, encrypted, to list and clone your repositories. You can disconnect at any time.',
      'We do not sell your data or show ads. Public deployments you publish are visible to everyone in Discover.',
    ],
  },
}

/** A short summary of the terms or the privacy policy. */
export function LegalDialog({ document, onClose }: { document: LegalDocument | null; onClose: () => void }) {
  const doc = document ? documents[document] : null
  return (
    <Dialog
      open={doc !== null}
      onClose={onClose}
      title={doc?.title ?? ''}
      footer={<Button onClick={onClose}>Got it</Button>}
    >
      <div className="space-y-3">
        {doc?.paragraphs.map((p) => <p key={p}>{p}</p>)}
      </div>
    </Dialog>
  )
}
