import { useState } from 'react'
import { cn } from '@/lib/cn'
import { initials } from '@/utils/format'

type AvatarProps = {
  src?: string
  name?: string
  username?: string
  size?: 'sm' | 'md' | 'lg'
  className?: string
}

const sizes = { sm: 'size-8 text-xs', md: 'size-10 text-sm', lg: 'size-16 text-xl' }

/** The user's picture, or their initials when there is none or it fails to load. */
export function Avatar({ src, name, username, size = 'md', className }: AvatarProps) {
  const [failed, setFailed] = useState(false)
  const classes = cn('shrink-0 rounded-full', sizes[size], className)
  if (src && !failed) {
    return <img src={src} alt="" className={cn(classes, 'object-cover')} onError={() => setFailed(true)} />
  }
  return (
    <span
      aria-hidden="true"
      className={cn(
        classes,
        'inline-flex items-center justify-center bg-indigo-100 font-semibold text-indigo-700 dark:bg-indigo-500/20 dark:text-indigo-200',
      )}
    >
      {initials(name, username)}
    </span>
  )
}
