// Every route of SPEC §2. `path` is the router pattern, `getHref` builds a link.

export const paths = {
  home: { path: '/', getHref: () => '/' },
  login: { path: '/login', getHref: () => '/login' },
  register: { path: '/register', getHref: () => '/register' },
  githubCallback: { path: '/github-callback', getHref: () => '/github-callback' },
  previewAccess: { path: '/preview-access', getHref: () => '/preview-access' },

  dashboard: { path: '/dashboard', getHref: () => '/dashboard' },
  discover: { path: '/discover', getHref: () => '/discover' },

  projects: { path: '/projects', getHref: () => '/projects' },
  newProject: {
    path: '/projects/new',
    getHref: (repo?: string | number) =>
      repo === undefined ? '/projects/new' : `/projects/new?repo=${encodeURIComponent(String(repo))}`,
  },
  project: { path: '/projects/:id', getHref: (id: string) => `/projects/${encodeURIComponent(id)}` },
  editProject: {
    path: '/projects/:id/edit',
    getHref: (id: string) => `/projects/${encodeURIComponent(id)}/edit`,
  },

  deployments: { path: '/deployments', getHref: () => '/deployments' },
  deployment: {
    path: '/deployments/:id',
    getHref: (id: string) => `/deployments/${encodeURIComponent(id)}`,
  },

  profile: { path: '/profile', getHref: () => '/profile' },
  settings: { path: '/settings', getHref: () => '/settings' },
  githubIntegration: { path: '/github-integration', getHref: () => '/github-integration' },
  notifications: { path: '/notifications', getHref: () => '/notifications' },
} as const
