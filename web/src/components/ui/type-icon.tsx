import {
  Atom,
  Braces,
  Coffee,
  Cog,
  FileCode,
  FileType,
  FlaskConical,
  FolderGit2,
  Gauge,
  Globe,
  Hash,
  Hexagon,
  Layers,
  Palette,
  Route,
  Server,
  Shield,
  SquareTerminal,
  Triangle,
  type LucideIcon,
} from 'lucide-react'
import { cn } from '@/lib/cn'

type Look = { icon: LucideIcon; label: string; className: string }

/** An icon, display name and colour for each SPEC §3 type. */
const TYPES: Record<string, Look> = {
  react: { icon: Atom, label: 'React', className: 'bg-sky-50 text-sky-600 dark:bg-sky-500/15 dark:text-sky-300' },
  vue: { icon: Triangle, label: 'Vue', className: 'bg-emerald-50 text-emerald-600 dark:bg-emerald-500/15 dark:text-emerald-300' },
  nextjs: { icon: Layers, label: 'Next.js', className: 'bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900' },
  angular: { icon: Shield, label: 'Angular', className: 'bg-red-50 text-red-600 dark:bg-red-500/15 dark:text-red-300' },
  python: { icon: SquareTerminal, label: 'Python', className: 'bg-blue-50 text-blue-600 dark:bg-blue-500/15 dark:text-blue-300' },
  nodejs: { icon: Hexagon, label: 'Node.js', className: 'bg-green-50 text-green-700 dark:bg-green-500/15 dark:text-green-300' },
  vanilla: { icon: Braces, label: 'Vanilla JS', className: 'bg-yellow-50 text-yellow-700 dark:bg-yellow-500/15 dark:text-yellow-300' },
  static: { icon: Globe, label: 'Static', className: 'bg-indigo-50 text-indigo-600 dark:bg-indigo-500/15 dark:text-indigo-300' },
  flask: { icon: FlaskConical, label: 'Flask', className: 'bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300' },
  django: { icon: Server, label: 'Django', className: 'bg-emerald-50 text-emerald-800 dark:bg-emerald-500/15 dark:text-emerald-300' },
  express: { icon: Route, label: 'Express', className: 'bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300' },
  html: { icon: FileCode, label: 'HTML', className: 'bg-orange-50 text-orange-600 dark:bg-orange-500/15 dark:text-orange-300' },
  css: { icon: Palette, label: 'CSS', className: 'bg-blue-50 text-blue-600 dark:bg-blue-500/15 dark:text-blue-300' },
  javascript: { icon: Braces, label: 'JavaScript', className: 'bg-yellow-50 text-yellow-700 dark:bg-yellow-500/15 dark:text-yellow-300' },
  typescript: { icon: FileType, label: 'TypeScript', className: 'bg-blue-50 text-blue-700 dark:bg-blue-500/15 dark:text-blue-300' },
  php: { icon: FileCode, label: 'PHP', className: 'bg-violet-50 text-violet-600 dark:bg-violet-500/15 dark:text-violet-300' },
  java: { icon: Coffee, label: 'Java', className: 'bg-orange-50 text-orange-700 dark:bg-orange-500/15 dark:text-orange-300' },
  csharp: { icon: Hash, label: 'C#', className: 'bg-purple-50 text-purple-700 dark:bg-purple-500/15 dark:text-purple-300' },
  go: { icon: Gauge, label: 'Go', className: 'bg-cyan-50 text-cyan-700 dark:bg-cyan-500/15 dark:text-cyan-300' },
  rust: { icon: Cog, label: 'Rust', className: 'bg-orange-50 text-orange-800 dark:bg-orange-500/15 dark:text-orange-300' },
}

const FALLBACK: Omit<Look, 'label'> = { icon: FolderGit2, className: 'bg-zinc-100 text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300' }

/** The display name of a type in the table above ("nextjs" → "Next.js"); undefined for others. */
export function typeIconLabel(type: string | undefined): string | undefined {
  return type ? TYPES[type]?.label : undefined
}

type TypeIconProps = {
  type: string | undefined
  /** The accessible name, e.g. "React app". */
  label: string
  /** A tooltip; none when undefined. */
  title?: string
  className?: string
}

/** The type's icon on a tinted square; unknown types get a repository icon. */
export function TypeIcon({ type, label, title, className }: TypeIconProps) {
  const look = (type && TYPES[type]) || FALLBACK
  const Icon = look.icon
  return (
    <span
      role="img"
      aria-label={label}
      title={title}
      className={cn('flex size-10 shrink-0 items-center justify-center rounded-lg', look.className, className)}
    >
      <Icon className="size-5" aria-hidden="true" />
    </span>
  )
}
