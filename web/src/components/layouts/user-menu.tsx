import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react'
import { Link } from 'react-router'
import { ChevronDown, LogOut, Settings, UserRound } from 'lucide-react'
import { Avatar } from '@/components/ui/avatar'
import { paths } from '@/config/paths'
import type { User } from '@/types/api'

const itemClasses =
  'flex w-full items-center gap-2.5 rounded-md px-2.5 py-2 text-left text-sm text-zinc-700 outline-none ' +
  'hover:bg-zinc-100 focus-visible:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800 dark:focus-visible:bg-zinc-800'

/** The avatar button of the top bar with Profile, Settings and Sign out. */
export function UserMenu({ user, onSignOut }: { user: User; onSignOut: () => void }) {
  const [open, setOpen] = useState(false)
  const root = useRef<HTMLDivElement>(null)
  const trigger = useRef<HTMLButtonElement>(null)
  const menu = useRef<HTMLDivElement>(null)
  const menuId = useId()

  useEffect(() => {
    if (!open) return
    const onPointer = (event: PointerEvent) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false)
    }
    document.addEventListener('pointerdown', onPointer)
    menu.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus()
    return () => document.removeEventListener('pointerdown', onPointer)
  }, [open])

  const close = (focusTrigger: boolean) => {
    setOpen(false)
    if (focusTrigger) trigger.current?.focus()
  }

  const onMenuKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const items = Array.from(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])
    const index = items.indexOf(document.activeElement as HTMLElement)
    if (event.key === 'Escape') {
      event.preventDefault()
      close(true)
    } else if (event.key === 'ArrowDown') {
      event.preventDefault()
      items[(index + 1) % items.length]?.focus()
    } else if (event.key === 'ArrowUp') {
      event.preventDefault()
      items[(index - 1 + items.length) % items.length]?.focus()
    } else if (event.key === 'Home') {
      event.preventDefault()
      items[0]?.focus()
    } else if (event.key === 'End') {
      event.preventDefault()
      items[items.length - 1]?.focus()
    } else if (event.key === 'Tab') {
      setOpen(false)
    }
  }

  return (
    <div ref={root} className="relative">
      <button
        ref={trigger}
        type="button"
        onClick={() => setOpen((o) => !o)}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault()
            setOpen(true)
          }
        }}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        aria-label="Account menu"
        className="flex items-center gap-2 rounded-lg p-1 pr-2 text-zinc-700 transition-colors hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800"
      >
        <Avatar src={user.avatar || undefined} name={user.fullName} username={user.username} size="sm" />
        <span className="hidden max-w-36 truncate text-sm font-medium sm:block">
          {user.fullName || user.username}
        </span>
        <ChevronDown className="size-4 text-zinc-400" aria-hidden="true" />
      </button>
      {open ? (
        <div
          ref={menu}
          id={menuId}
          role="menu"
          aria-label="Account"
          onKeyDown={onMenuKeyDown}
          className="absolute right-0 z-50 mt-2 w-60 origin-top-right rounded-xl border border-zinc-200 bg-white p-1.5 shadow-lg motion-safe:animate-pop-in dark:border-zinc-800 dark:bg-zinc-900"
        >
          <div className="px-2.5 pb-2 pt-1.5" role="none">
            <p className="truncate text-sm font-medium text-zinc-900 dark:text-zinc-50">{user.fullName}</p>
            <p className="truncate text-xs text-zinc-500 dark:text-zinc-400">{user.email}</p>
          </div>
          <div className="my-1 h-px bg-zinc-200 dark:bg-zinc-800" role="none" />
          <Link role="menuitem" tabIndex={-1} to={paths.profile.getHref()} className={itemClasses} onClick={() => close(false)}>
            <UserRound className="size-4 text-zinc-400" aria-hidden="true" />
            Profile
          </Link>
          <Link role="menuitem" tabIndex={-1} to={paths.settings.getHref()} className={itemClasses} onClick={() => close(false)}>
            <Settings className="size-4 text-zinc-400" aria-hidden="true" />
            Settings
          </Link>
          <div className="my-1 h-px bg-zinc-200 dark:bg-zinc-800" role="none" />
          <button
            role="menuitem"
            tabIndex={-1}
            type="button"
            className={itemClasses}
            onClick={() => {
              setOpen(false)
              onSignOut()
            }}
          >
            <LogOut className="size-4 text-zinc-400" aria-hidden="true" />
            Sign out
          </button>
        </div>
      ) : null}
    </div>
  )
}
