import { Lightbulb } from 'lucide-react'
import type { Deployment, Diagnosis } from '../types'

/** Renders `code` spans of a diagnosis sentence as code. */
function Sentence({ text }: { text: string }) {
  const parts = text.split('`')
  return (
    <>
      {parts.map((part, i) =>
        i % 2 === 1 ? (
          <code key={i} className="rounded bg-red-100 px-1 py-px font-mono text-[0.85em] dark:bg-red-500/20">
            {part}
          </code>
        ) : (
          part
        ),
      )}
    </>
  )
}

/**
 * The "Why it failed" card at the top of a failed deployment's page: what
 * went wrong and what to do (the build's diagnosis, docs/api.md), the
 * failure's own line, and how many log lines below are highlighted.
 */
export function WhyItFailedCard({
  diagnosis,
  error,
}: {
  diagnosis: Diagnosis
  error?: Deployment['error']
}) {
  const n = diagnosis.lines?.length ?? 0
  return (
    <section
      role="alert"
      aria-labelledby="why-it-failed"
      className="mb-6 rounded-xl border border-red-200 bg-red-50 px-4 py-4 text-sm text-red-900 sm:px-5 dark:border-red-500/30 dark:bg-red-500/10 dark:text-red-100"
    >
      <div className="flex items-start gap-3">
        <Lightbulb className="mt-0.5 size-5 shrink-0 text-red-500 dark:text-red-400" aria-hidden="true" />
        <div className="min-w-0">
          <h2 id="why-it-failed" className="text-xs font-semibold tracking-wide text-red-700 uppercase dark:text-red-300">
            Why it failed
          </h2>
          <p className="mt-1 text-base font-semibold break-words">
            <Sentence text={diagnosis.title} />
          </p>
          <p className="mt-1.5 break-words text-red-800 dark:text-red-200">
            <Sentence text={diagnosis.detail} />
          </p>
          <p className="mt-2 text-xs break-words text-red-700/80 dark:text-red-300/80">
            {error ? <span className="font-mono">{error}</span> : null}
            {error && n > 0 ? ' · ' : null}
            {n > 0 ? `${n} ${n === 1 ? 'line' : 'lines'} highlighted in the logs below` : null}
          </p>
        </div>
      </div>
    </section>
  )
}
