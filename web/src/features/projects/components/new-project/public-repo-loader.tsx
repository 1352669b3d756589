import { useState, type FormEvent } from 'react'
import { Download } from 'lucide-react'
import toast from 'react-hot-toast'
import { Button } from '@/components/ui/button'
import { Input } from '@/components/ui/input'
import { repoUrlSchema } from '../../schemas'

type PublicRepoLoaderProps = {
  loading: boolean
  onLoad: (url: string) => void
}

/** The URL field and Load Repository button of "Any Public Repository". */
export function PublicRepoLoader({ loading, onLoad }: PublicRepoLoaderProps) {
  const [url, setUrl] = useState('')
  const [error, setError] = useState<string>()

  const onSubmit = (event: FormEvent) => {
    event.preventDefault()
    const result = repoUrlSchema.safeParse(url)
    if (!result.success) {
      const message = result.error.issues[0]?.message ?? 'Please enter a repository URL'
      setError(message)
      toast.error(message)
      return
    }
    onLoad(result.data)
  }

  return (
    <form onSubmit={onSubmit} noValidate className="flex flex-col gap-3 sm:flex-row sm:items-start">
      <Input
        label="Repository URL"
        name="repoUrl"
        type="url"
        inputMode="url"
        autoComplete="off"
        spellCheck={false}
        placeholder="https://github.com/owner/repository"
        value={url}
        onChange={(e) => {
          setUrl(e.target.value)
          setError(undefined)
        }}
        error={error}
        hint="GitHub, GitLab, Codeberg or any public git host."
        className="flex-1 [&_input]:font-mono"
      />
      <Button
        type="submit"
        loading={loading}
        className="sm:mt-6.5"
        icon={<Download className="size-4" aria-hidden="true" />}
      >
        Load Repository
      </Button>
    </form>
  )
}
