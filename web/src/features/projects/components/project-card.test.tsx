import { render, screen } from '@testing-library/react'
import { MemoryRouter } from 'react-router'
import { describe, expect, it } from 'vitest'
import { makeProject } from '@/test/fixtures'
import { liveURLFor, projectLiveURL, subdomainFromName } from '../live-url'
import type { Project } from '../types'
import { ProjectCard } from './project-card'

function renderCard(project: Project) {
  return render(
    <MemoryRouter>
      <ProjectCard project={project} />
    </MemoryRouter>,
  )
}

describe('project card', () => {
  it('shows the project and a View Live link for a deployed project', () => {
    renderCard(makeProject())
    expect(screen.getByRole('link', { name: 'Portfolio Site' })).toHaveAttribute('href', '/projects/p1')
    expect(screen.getByText('alice/site')).toBeInTheDocument()
    expect(screen.getByText('Live')).toBeInTheDocument()
    expect(screen.getByText('Updated Mar 4, 2026')).toBeInTheDocument()
    expect(screen.getByRole('link', { name: /View Details/ })).toHaveAttribute('href', '/projects/p1')
    expect(screen.getByRole('link', { name: /View Live/ })).toHaveAttribute(
      'href',
      'http://portfolio-site.localhost:8080',
    )
  })

  it('falls back to "Never updated" and "No description", and has no View Live unless deployed', () => {
    const base = makeProject()
    renderCard(
      makeProject({
        status: 'draft',
        description: '',
        repository: { ...base.repository, lastCommit: null },
        activeDeployment: null,
      }),
    )
    expect(screen.getByText('Never updated')).toBeInTheDocument()
    expect(screen.getByText('No description')).toBeInTheDocument()
    expect(screen.getByText('Draft')).toBeInTheDocument()
    expect(screen.queryByRole('link', { name: /View Live/ })).not.toBeInTheDocument()
  })

  it.each(['building', 'failed'])('has no View Live link when %s', (status) => {
    renderCard(makeProject({ status }))
    expect(screen.queryByRole('link', { name: /View Live/ })).not.toBeInTheDocument()
  })
})

describe('live URL of a project', () => {
  const loc = { protocol: 'http:', hostname: 'localhost', port: '8080' }

  it('prefers the URL the API sent', () => {
    expect(projectLiveURL(makeProject(), loc)).toBe('http://portfolio-site.localhost:8080')
  })

  it('uses the active subdomain, then the SPEC name rule', () => {
    expect(projectLiveURL(makeProject({ activeDeployment: { subdomain: 'my-site-2' } }), loc)).toBe(
      'http://my-site-2.localhost:8080',
    )
    expect(
      projectLiveURL(makeProject({ name: 'My Cool_App!', activeDeployment: null, subdomain: undefined }), loc),
    ).toBe('http://my-cool-app.localhost:8080')
  })

  it('lowercases and hyphenates names, and leaves out an empty port', () => {
    expect(subdomainFromName('  Hello World 2026 ')).toBe('hello-world-2026')
    expect(liveURLFor('site', { protocol: 'https:', hostname: 'gantry.dev', port: '' })).toBe('https://site.gantry.dev')
  })
})
