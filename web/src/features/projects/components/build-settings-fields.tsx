import { Input } from '@/components/ui/input'
import { DEFAULT_BUILD } from '@/config/constants'

export type BuildSettings = {
  installCommand: string
  buildCommand: string
  outputDirectory: string
  startCommand: string
}

type BuildSettingsFieldsProps = {
  values: BuildSettings
  onChange: (field: keyof BuildSettings, value: string) => void
  /** The build command's placeholder ("npm run build" when nothing was suggested). */
  buildPlaceholder?: string
}

/** Install, build, output and start command fields, shared by the new and edit forms. */
export function BuildSettingsFields({
  values,
  onChange,
  buildPlaceholder = DEFAULT_BUILD.buildCommandPlaceholder,
}: BuildSettingsFieldsProps) {
  return (
    <div className="grid gap-5 sm:grid-cols-2">
      <Input
        label="Install command"
        name="installCommand"
        value={values.installCommand}
        onChange={(e) => onChange('installCommand', e.target.value)}
        placeholder={DEFAULT_BUILD.installCommand}
        className="[&_input]:font-mono"
        autoComplete="off"
        spellCheck={false}
      />
      <Input
        label="Build command"
        name="buildCommand"
        value={values.buildCommand}
        onChange={(e) => onChange('buildCommand', e.target.value)}
        placeholder={buildPlaceholder}
        className="[&_input]:font-mono"
        autoComplete="off"
        spellCheck={false}
      />
      <Input
        label="Output directory"
        name="outputDirectory"
        value={values.outputDirectory}
        onChange={(e) => onChange('outputDirectory', e.target.value)}
        placeholder={DEFAULT_BUILD.outputDirectory}
        className="[&_input]:font-mono"
        autoComplete="off"
        spellCheck={false}
      />
      <Input
        label="Start command (optional)"
        name="startCommand"
        value={values.startCommand}
        onChange={(e) => onChange('startCommand', e.target.value)}
        placeholder="node server.js"
        hint="Only for server apps; leave it empty for a static site."
        className="[&_input]:font-mono"
        autoComplete="off"
        spellCheck={false}
      />
    </div>
  )
}
