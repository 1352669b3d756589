import { useMutation, useQueryClient } from '@tanstack/react-query'
import toast from 'react-hot-toast'
import { errorMessage } from '@/lib/api-client'
import type { NotificationPage } from '../types'
import { notificationKeys } from './keys'

/**
 * A notifications mutation that changes every cached list at once
 * (`update`), puts them back and shows `failureText` (server message
 * preferred) when the server refuses, and refetches the lists afterwards.
 */
export function useOptimisticNotifications<V>(
  mutationFn: (vars: V) => Promise<unknown>,
  update: (page: NotificationPage, vars: V) => NotificationPage,
  failureText: string,
) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn,
    onMutate: async (vars: V) => {
      await queryClient.cancelQueries({ queryKey: notificationKeys.lists() })
      const previous = queryClient.getQueriesData<NotificationPage>({ queryKey: notificationKeys.lists() })
      queryClient.setQueriesData<NotificationPage>({ queryKey: notificationKeys.lists() }, (page) =>
        page ? update(page, vars) : page,
      )
      return { previous }
    },
    onError: (err, _vars, context) => {
      for (const [key, page] of context?.previous ?? []) queryClient.setQueryData(key, page)
      toast.error(errorMessage(err, failureText))
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: notificationKeys.all }),
  })
}
