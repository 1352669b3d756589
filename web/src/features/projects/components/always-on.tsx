import { Switch, type SwitchProps } from '@/components/ui/switch'

export const ALWAYS_ON = 'Always on'

export const ALWAYS_ON_HINT =
  'Keeps the server app running even when nobody visits; otherwise it sleeps after going unused and wakes at its next visit. Paid plans.'

/** The labelled "Always on" switch of the project detail and edit screens. */
export function AlwaysOnSwitch(props: Omit<SwitchProps, 'label' | 'hint'>) {
  return <Switch label={ALWAYS_ON} hint={ALWAYS_ON_HINT} {...props} />
}
