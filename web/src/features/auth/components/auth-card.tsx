import type { ReactNode } from 'react'
import { Card } from '@/components/ui/card'

type AuthCardProps = { title: string; description: ReactNode; children: ReactNode; footer: ReactNode }

/** The frame of the sign-in and sign-up screens. */
export function AuthCard({ title, description, children, footer }: AuthCardProps) {
  return (
    <div className="mx-auto flex w-full max-w-md flex-col px-4 py-10 sm:py-16">
      <div className="mb-6 text-center">
        <h1 className="text-2xl font-semibold tracking-tight text-zinc-900 dark:text-zinc-50">{title}</h1>
        <p className="mt-2 text-sm text-zinc-600 dark:text-zinc-400">{description}</p>
      </div>
      <Card className="p-6 sm:p-8">{children}</Card>
      <p className="mt-6 text-center text-sm text-zinc-600 dark:text-zinc-400">{footer}</p>
    </div>
  )
}
