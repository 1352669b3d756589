import { render, screen } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { ProjectStatusBadge } from '@/features/projects/components/project-status-badge'
import { DeploymentStatusBadge, DeploymentStatusIcon } from './deployment-status'

describe('status badges', () => {
  it.each([
    ['live', 'Live'],
    ['building', 'Building'],
    ['deploying', 'Deploying'],
    ['pending', 'Pending'],
    ['failed', 'Failed'],
    ['stopped', 'Stopped'],
  ])('deployment %s shows %s', (status, label) => {
    render(
      <>
        <DeploymentStatusBadge status={status} />
        <DeploymentStatusIcon status={status} />
      </>,
    )
    expect(screen.getByText(label)).toBeInTheDocument()
    expect(screen.getByRole('img', { name: `Status: ${label}` })).toBeInTheDocument()
  })

  it.each([
    ['deployed', 'Live'],
    ['building', 'Building'],
    ['failed', 'Failed'],
    ['draft', 'Draft'],
    ['archived', 'archived'],
  ])('project %s shows %s', (status, label) => {
    render(<ProjectStatusBadge status={status} />)
    expect(screen.getByText(label, { exact: true })).toBeInTheDocument()
  })

  it('shows an unknown project status raw and grey', () => {
    render(<ProjectStatusBadge status="queued-for-review" />)
    expect(screen.getByText('queued-for-review')).toHaveClass('bg-zinc-100')
  })

  it('shows a sleeping live app as Sleeping, and only a live one', () => {
    render(
      <>
        <DeploymentStatusBadge status="live" sleeping />
        <DeploymentStatusIcon status="live" sleeping />
        <ProjectStatusBadge status="deployed" sleeping />
        <DeploymentStatusBadge status="stopped" sleeping />
      </>,
    )
    expect(screen.getAllByText('Sleeping')).toHaveLength(2)
    expect(screen.getByRole('img', { name: 'Status: Sleeping' })).toBeInTheDocument()
    expect(screen.getByText('Stopped')).toBeInTheDocument()
  })
})
