import { NotificationCenter } from '@/features/notifications/components/notification-center'

/** /notifications (SPEC §2 names it; its content is Gantry's own). */
export function NotificationsRoute() {
  return <NotificationCenter />
}
