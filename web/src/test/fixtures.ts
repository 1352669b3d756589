// Sample projects, deployments and log entries for the tests of the
// projects, deployments and logs screens.
import type { Deployment } from '@/features/deployments/types'
import type { LogEntry } from '@/features/logs/types'
import type { Project, RepoLookup } from '@/features/projects/types'

export function makeProject(overrides: Partial<Project> = {}): Project {
  return {
    _id: 'p1',
    name: 'Portfolio Site',
    description: 'My personal portfolio',
    status: 'deployed',
    type: 'static',
    repository: {
      id: 'r1',
      name: 'site',
      fullName: 'alice/site',
      description: 'A static site',
      defaultBranch: 'main',
      private: false,
      url: 'https://github.com/alice/site',
      cloneUrl: 'https://github.com/alice/site.git',
      lastCommit: { message: 'Add footer', author: 'Alice', date: '2026-03-04T10:00:00Z', sha: 'abcdef1234567890' },
    },
    branch: 'main',
    subdomain: 'portfolio-site',
    buildConfig: { installCommand: '', buildCommand: '', outputDirectory: '.' },
    activeDeployment: { _id: 'd1', subdomain: 'portfolio-site', url: 'http://portfolio-site.localhost:8080' },
    deployments: [
      {
        _id: 'd1',
        version: '1.0.0',
        subdomain: 'portfolio-site',
        url: 'http://portfolio-site.localhost:8080',
        status: 'live',
        createdAt: '2026-03-05T09:00:00Z',
      },
    ],
    ...overrides,
  }
}

export function makeDeployment(overrides: Partial<Deployment> = {}): Deployment {
  return {
    _id: 'd1',
    version: '1.0.0',
    subdomain: 'portfolio-site',
    url: 'http://portfolio-site.localhost:8080',
    status: 'live',
    createdAt: '2026-03-05T09:00:00Z',
    project: {
      _id: 'p1',
      name: 'Portfolio Site',
      type: 'static',
      buildConfig: { installCommand: '', buildCommand: '', outputDirectory: '.' },
      repository: { fullName: 'alice/site' },
    },
    buildInfo: {
      startTime: '2026-03-05T09:00:01Z',
      endTime: '2026-03-05T09:00:13Z',
      duration: 12_400,
      buildSize: 3072,
      buildCommand: '',
      outputDirectory: '.',
    },
    metadata: {
      commitHash: 'abcdef1234567890',
      commitMessage: 'Add footer',
      branch: 'main',
      author: 'Alice',
      trigger: 'manual',
      repository: { fullName: 'alice/site' },
    },
    buildLogs: [],
    environment: { variables: [] },
    ...overrides,
  }
}

export function makeLog(seq: number, overrides: Partial<LogEntry> = {}): LogEntry {
  return {
    seq,
    timestamp: new Date(Date.UTC(2026, 2, 5, 9, 0, seq)).toISOString(),
    level: 'info',
    type: 'deployment',
    message: `line ${seq}`,
    ...overrides,
  }
}

export function makeLookup(overrides: Partial<RepoLookup> = {}): RepoLookup {
  return {
    repository: makeProject().repository,
    branch: 'main',
    suggestedName: 'site',
    suggestedDescription: 'A static site',
    buildConfig: { installCommand: '', buildCommand: '', outputDirectory: '.' },
    framework: 'static',
    ...overrides,
  }
}
