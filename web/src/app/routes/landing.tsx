import { Link } from 'react-router'
import {
  ArrowRight,
  Gauge,
  GitBranch,
  Globe,
  GraduationCap,
  ShieldCheck,
  Terminal,
  type LucideIcon,
} from 'lucide-react'
import { buttonClasses } from '@/components/ui/button'
import { Card } from '@/components/ui/card'
import { LANDING_CLAIMS } from '@/config/constants'
import { paths } from '@/config/paths'
import { FeaturedProjects } from '@/features/discover/components/featured-projects'

const features: Array<{ icon: LucideIcon; title: string; text: string }> = [
  {
    icon: GitBranch,
    title: 'Deploy from GitHub',
    text: 'Connect your account and pick a repository, or paste the URL of any public one.',
  },
  {
    icon: Gauge,
    title: 'Zero configuration',
    text: 'React, Vue, Next.js, Angular, Node, Python and plain HTML are detected and built for you.',
  },
  {
    icon: Globe,
    title: 'Global CDN',
    text: 'Every project gets its own subdomain, served fast to classmates and recruiters anywhere.',
  },
  {
    icon: ShieldCheck,
    title: 'Automatic HTTPS',
    text: 'Certificates are issued and renewed for you. No setup, no expiry surprises.',
  },
  {
    icon: Terminal,
    title: 'Live build logs',
    text: 'Watch your install and build steps as they run, and see exactly why a build failed.',
  },
  {
    icon: GraduationCap,
    title: 'Free for students',
    text: 'A free tier made for coursework, portfolios and side projects. No credit card needed.',
  },
]

const logLines: Array<{ text: string; tone: string }> = [
  { text: '$ gantry deploy', tone: 'text-zinc-100' },
  { text: '→ Cloning github.com/ada/portfolio (main)', tone: 'text-zinc-400' },
  { text: '→ Detected framework: Vite + React', tone: 'text-zinc-400' },
  { text: '→ npm install   added 214 packages in 6s', tone: 'text-zinc-400' },
  { text: '→ npm run build  dist/ 142 KB', tone: 'text-zinc-400' },
  { text: '✓ Live at https://ada-portfolio.gantry.app', tone: 'text-emerald-400' },
]

/** The landing page of SPEC §2 (/ for visitors). */
export function LandingRoute() {
  return (
    <>
      <title>Gantry · Deploy student web projects in minutes</title>

      {/* Hero */}
      <section className="relative overflow-hidden">
        <div
          aria-hidden="true"
          className="pointer-events-none absolute inset-x-0 -top-40 -z-10 mx-auto h-96 max-w-4xl rounded-full bg-indigo-500/15 blur-3xl dark:bg-indigo-500/10"
        />
        <div className="mx-auto grid max-w-6xl items-center gap-12 px-4 pb-16 pt-16 sm:px-6 sm:pt-24 lg:grid-cols-2">
          <div>
            <p className="inline-flex items-center gap-2 rounded-full border border-zinc-200 bg-white px-3 py-1 text-xs font-medium text-zinc-700 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-300">
              <span className="size-1.5 rounded-full bg-emerald-500" aria-hidden="true" />
              Free tier for students and hobbyists
            </p>
            <h1 className="mt-6 text-4xl font-semibold tracking-tight text-balance text-zinc-900 sm:text-5xl dark:text-zinc-50">
              Ship your projects from git to a live URL in minutes.
            </h1>
            <p className="mt-5 max-w-xl text-lg text-pretty text-zinc-600 dark:text-zinc-400">
              Gantry builds your repository and serves it on your own subdomain, with HTTPS and live logs.
              Made for class assignments, portfolios and weekend ideas.
            </p>
            <div className="mt-8 flex flex-col gap-3 sm:flex-row">
              <Link to={paths.register.getHref()} className={buttonClasses({ size: 'lg' })}>
                Get Started
                <ArrowRight className="size-4" aria-hidden="true" />
              </Link>
              <Link to={paths.discover.getHref()} className={buttonClasses({ variant: 'secondary', size: 'lg' })}>
                Discover Apps
              </Link>
            </div>
          </div>
          <div className="overflow-hidden rounded-xl border border-zinc-800 bg-zinc-950 shadow-2xl shadow-indigo-950/10">
            <div className="flex items-center gap-1.5 border-b border-zinc-800 px-4 py-3" aria-hidden="true">
              <span className="size-2.5 rounded-full bg-zinc-700" />
              <span className="size-2.5 rounded-full bg-zinc-700" />
              <span className="size-2.5 rounded-full bg-zinc-700" />
              <span className="ml-3 font-mono text-xs text-zinc-500">build log</span>
            </div>
            <pre className="overflow-x-auto p-5 font-mono text-xs leading-6 whitespace-pre-wrap break-words sm:text-[13px]">
              {logLines.map((l) => (
                <div key={l.text} className={l.tone}>
                  {l.text}
                </div>
              ))}
            </pre>
          </div>
        </div>
      </section>

      {/* Stats strip */}
      <section aria-label="Gantry in numbers" className="border-y border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900/40">
        <dl className="mx-auto grid max-w-6xl grid-cols-2 gap-y-8 px-4 py-10 sm:px-6 md:grid-cols-4">
          {LANDING_CLAIMS.map((claim) => (
            <div key={claim.label} className="flex flex-col-reverse items-center text-center">
              <dt className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{claim.label}</dt>
              <dd className="text-3xl font-semibold tracking-tight tabular-nums text-zinc-900 dark:text-zinc-50">
                {claim.value}
              </dd>
            </div>
          ))}
        </dl>
      </section>

      {/* Features */}
      <section className="mx-auto max-w-6xl px-4 py-20 sm:px-6" aria-labelledby="features-title">
        <div className="mx-auto max-w-2xl text-center">
          <h2 id="features-title" className="text-3xl font-semibold tracking-tight text-zinc-900 dark:text-zinc-50">
            Everything you need to go live
          </h2>
          <p className="mt-3 text-zinc-600 dark:text-zinc-400">
            The workflow professional teams use, without the setup and the bill.
          </p>
        </div>
        <ul className="mt-12 grid gap-6 sm:grid-cols-2 lg:grid-cols-3">
          {features.map(({ icon: Icon, title, text }) => (
            <li key={title}>
              <Card className="h-full p-6">
                <div className="flex size-10 items-center justify-center rounded-lg bg-indigo-50 text-indigo-600 dark:bg-indigo-500/15 dark:text-indigo-300">
                  <Icon className="size-5" aria-hidden="true" />
                </div>
                <h3 className="mt-4 font-semibold text-zinc-900 dark:text-zinc-50">{title}</h3>
                <p className="mt-2 text-sm text-zinc-600 dark:text-zinc-400">{text}</p>
              </Card>
            </li>
          ))}
        </ul>
      </section>

      {/* Featured Student Projects */}
      <section className="border-t border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900/40" aria-labelledby="featured-title">
        <div className="mx-auto max-w-6xl px-4 py-20 sm:px-6">
          <div className="mb-10 flex flex-col gap-4 sm:flex-row sm:items-end sm:justify-between">
            <div>
              <h2 id="featured-title" className="text-3xl font-semibold tracking-tight text-zinc-900 dark:text-zinc-50">
                Featured Student Projects
              </h2>
              <p className="mt-2 text-zinc-600 dark:text-zinc-400">Fresh from the Gantry community.</p>
            </div>
            <Link
              to={paths.discover.getHref()}
              className="inline-flex items-center gap-1 rounded text-sm font-medium text-indigo-600 hover:text-indigo-500 dark:text-indigo-400 dark:hover:text-indigo-300"
            >
              Browse all apps
              <ArrowRight className="size-4" aria-hidden="true" />
            </Link>
          </div>
          <FeaturedProjects />
        </div>
      </section>

      {/* Call to action */}
      <section className="mx-auto max-w-6xl px-4 py-20 sm:px-6">
        <div className="relative overflow-hidden rounded-2xl bg-zinc-900 px-6 py-14 text-center sm:px-12 dark:bg-zinc-900 dark:ring-1 dark:ring-zinc-800">
          <div
            aria-hidden="true"
            className="pointer-events-none absolute -bottom-24 left-1/2 h-64 w-[36rem] -translate-x-1/2 rounded-full bg-indigo-500/30 blur-3xl"
          />
          <h2 className="relative text-3xl font-semibold tracking-tight text-white">Ready to ship your first project?</h2>
          <p className="relative mx-auto mt-3 max-w-xl text-zinc-300">
            Create a free account, connect a repository and share a live link before your next class.
          </p>
          <div className="relative mt-8 flex flex-col justify-center gap-3 sm:flex-row">
            <Link
              to={paths.register.getHref()}
              className={buttonClasses({
                variant: 'none',
                size: 'lg',
                className: 'bg-white text-zinc-900 shadow-sm hover:bg-zinc-100',
              })}
            >
              Create free account
            </Link>
            <Link
              to={paths.login.getHref()}
              className={buttonClasses({
                variant: 'none',
                size: 'lg',
                className: 'text-zinc-100 ring-1 ring-inset ring-white/20 hover:bg-white/10 hover:text-white',
              })}
            >
              Sign In
            </Link>
          </div>
        </div>
      </section>
    </>
  )
}
