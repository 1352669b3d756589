import { Switch, type SwitchProps } from '@/components/ui/switch'
import type { Project } from '../types'

export const SHOW_IN_DISCOVER = 'Show in Discover'

/** The switch's one-line hint: why it starts off for a private repository. */
export function showInDiscoverHint(isPrivate: boolean) {
  return isPrivate
    ? 'Off by default: the repository is private.'
    : 'Lists the live app in the public gallery and on the home page.'
}

/** Whether a project shows in Discover: its own setting, else the default for its repository. */
export function showsInDiscover(project: Project) {
  return project.showInDiscover ?? !project.repository?.private
}

type ShowInDiscoverSwitchProps = Omit<SwitchProps, 'label' | 'hint'> & { isPrivate: boolean }

/** The labelled "Show in Discover" switch of the project detail and edit screens. */
export function ShowInDiscoverSwitch({ isPrivate, ...props }: ShowInDiscoverSwitchProps) {
  return <Switch label={SHOW_IN_DISCOVER} hint={showInDiscoverHint(isPrivate)} {...props} />
}
