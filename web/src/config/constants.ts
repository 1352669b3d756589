// Business constants of SPEC §9. Everything numeric the UI relies on lives here.

/** Toasts stay on screen this long. */
export const TOAST_DURATION_MS = 4000

/** Redirect delay after starting a deploy or deleting something. */
export const REDIRECT_AFTER_ACTION_MS = 1000
/** Redirect delay after a successful GitHub callback (to the dashboard). */
export const GITHUB_SUCCESS_REDIRECT_MS = 2000
/** Redirect delay after a failed GitHub callback (to the GitHub integration page). */
export const GITHUB_ERROR_REDIRECT_MS = 3000

/** Notifications are refetched this often. */
export const NOTIFICATIONS_REFETCH_MS = 30_000
/** The bell fetches this many of the newest notifications (the API's default). */
export const NOTIFICATIONS_BELL_LIMIT = 50
/** The bell's dropdown shows this many of them. */
export const NOTIFICATIONS_DROPDOWN_SHOWN = 6
/** The notifications page fetches this many (all the server keeps). */
export const NOTIFICATIONS_PAGE_LIMIT = 200
/** A deployment detail refetches this often while building or deploying. */
export const DEPLOYMENT_REFETCH_MS = 5000
/**
 * A project's deployment lists (History, Previews) refetch this often while nothing is
 * on its way, so a deployment a push, pull request or deploy hook started shows up on
 * its own.
 */
export const PROJECT_DEPLOYMENTS_IDLE_REFETCH_MS = 10_000

/** The sidebar's storage usage refetches this often. */
export const STORAGE_REFETCH_MS = 60_000
/** Storage usage shows as nearly full (amber) from this share of the budget. */
export const STORAGE_WARN_RATIO = 0.8
/** A project keeps the files of this many stopped deployments (gantry.KeepDeployments). */
export const KEEP_DEPLOYMENTS = 10

/** The unread badge shows "99+" above this number. */
export const UNREAD_BADGE_MAX = 99

export const LOG_FETCH_LIMIT = 200
export const PROJECT_RECENT_DEPLOYMENTS = 5
export const FEATURED_PROJECTS_LIMIT = 3
export const TRENDING_TOP = 3

/** Registration rules (SPEC §5). */
export const USERNAME_MIN = 3
export const PASSWORD_MIN = 6
export const FULL_NAME_MAX = 100

/** Data queries retry once and never refetch on window focus. */
export const QUERY_RETRY = 1

/** Client-side storage keys (SPEC §3). */
export const TOKEN_STORAGE_KEY = 'token'
export const THEME_STORAGE_KEY = 'theme'

export const THEMES = ['light', 'dark'] as const

export const ROLES = ['student', 'hobbyist', 'developer', 'admin'] as const
export const DEFAULT_ROLE = 'student'

export const PLANS = ['free', 'basic', 'pro', 'enterprise'] as const
export const DEFAULT_PLAN = 'free'
export const DEFAULT_MAX_PROJECTS = 3
export const DEFAULT_MAX_DEPLOYMENTS = 5

export const DEFAULT_DEPLOYMENT_VERSION = '1.0.0'

/** Default build settings of a new project. */
export const DEFAULT_BUILD = {
  branch: 'main',
  outputDirectory: 'dist',
  installCommand: 'npm install',
  buildCommandPlaceholder: 'npm run build',
} as const

/** Discover category mapping; other types fall outside the named categories. */
export const CATEGORY_TYPES = {
  frontend: ['react', 'vue', 'angular', 'nextjs'],
  backend: ['python', 'nodejs'],
  static: ['static'],
} as const

export const DISCOVER_SORTS = ['recent', 'oldest', 'name', 'popular', 'trending'] as const

/** Trending score = 0.4 × views + 0.6 × likeCount + 0.1 × days since creation. */
export const TRENDING_WEIGHTS = { views: 0.4, likes: 0.6, days: 0.1 } as const

/** The fixed claims of the landing page's stats strip (SPEC §1). */
export const LANDING_CLAIMS = [
  { value: '10,000+', label: 'Projects deployed' },
  { value: '5,000+', label: 'Students & developers' },
  { value: '50+', label: 'Countries' },
  { value: '99.9%', label: 'Uptime' },
] as const

/** The footer's credit line. */
export const AGENCY_CREDIT = { name: 'Northlight Web Agency' } as const

/** What a Sleeping badge says on hover: a live server app asleep after going unused (GANTRY_APP_IDLE). */
export const SLEEPING_HINT = 'Asleep after going unused: its next visit wakes it in a moment.'
