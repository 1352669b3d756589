import { useState, type ChangeEvent, type FormEvent } from 'react'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { fieldErrors } from '@/lib/validation'
import type { User } from '@/types/api'
import { useUpdateProfile } from '../api/update-profile'
import { profileSchema, type ProfileValues } from '../schemas'

type Field = keyof ProfileValues

function valuesOf(user: User): ProfileValues {
  return { fullName: user.fullName ?? '', username: user.username ?? '', email: user.email ?? '' }
}

/** Full name, username and email, editable (SPEC §2 Profile, §5 Profile). */
export function ProfileForm({ user }: { user: User }) {
  const [values, setValues] = useState<ProfileValues>(() => valuesOf(user))
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({})
  const update = useUpdateProfile({ onSuccess: (saved) => setValues(valuesOf(saved)) })

  const initial = valuesOf(user)
  const dirty = (Object.keys(initial) as Field[]).some((f) => values[f] !== initial[f])

  const onChange = (field: Field) => (event: ChangeEvent<HTMLInputElement>) => {
    setValues((v) => ({ ...v, [field]: event.target.value }))
    setErrors((e) => (e[field] ? { ...e, [field]: undefined } : e))
  }

  const onSubmit = (event: FormEvent) => {
    event.preventDefault()
    const result = fieldErrors(profileSchema, values)
    if (result.errors) {
      setErrors(result.errors)
      return
    }
    update.mutate(result.data)
  }

  return (
    <Card>
      <form onSubmit={onSubmit} noValidate>
        <CardHeader>
          <CardTitle>Personal information</CardTitle>
          <CardDescription>How you appear on Gantry and in Discover.</CardDescription>
        </CardHeader>
        <CardContent className="grid gap-5 sm:grid-cols-2">
          <Input
            label="Full name"
            name="fullName"
            autoComplete="name"
            value={values.fullName}
            onChange={onChange('fullName')}
            error={errors.fullName}
            className="sm:col-span-2"
          />
          <Input
            label="Username"
            name="username"
            autoComplete="username"
            autoCapitalize="none"
            spellCheck={false}
            value={values.username}
            onChange={onChange('username')}
            error={errors.username}
          />
          <Input
            label="Email address"
            name="email"
            type="email"
            autoComplete="email"
            value={values.email}
            onChange={onChange('email')}
            error={errors.email}
          />
        </CardContent>
        <CardFooter className="justify-end">
          <Button
            variant="ghost"
            disabled={!dirty || update.isPending}
            onClick={() => {
              setValues(initial)
              setErrors({})
            }}
          >
            Reset
          </Button>
          <Button type="submit" loading={update.isPending} disabled={!dirty}>
            {update.isPending ? 'Saving...' : 'Save changes'}
          </Button>
        </CardFooter>
      </form>
    </Card>
  )
}
