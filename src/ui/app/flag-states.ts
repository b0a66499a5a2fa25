/**
 * A flag's state in every environment the person may read, and its pending change requests per
 * environment (docs/ui.md#a-flags-page): what the environment tabs and the Environments table show,
 * read again each time the page reloads the flag (`version`, 0 before the first load).
 */

import { useEffect, useState } from 'preact/hooks'
import type { Rollout } from '../../domain/rollout.ts'
import { api } from './api.ts'
import { type ListedRequest, pendingCounts } from './environment-tab-words.ts'

/** One environment's state of the flag, as `GET /api/flags/{name}/environments` answers it. */
export type FlagState = {
  valueExists: boolean
  value?: unknown
  enabled?: boolean
  targeting?: unknown
  chancePercentB?: number
  rollout?: Rollout | null
}

/** The flag's states by environment (`null` until read) and its pending requests' counts. */
export function useFlagStates(name: string, version: number): { states: Record<string, FlagState> | null; pending: Map<string, number> } {
  const [states, setStates] = useState<Record<string, FlagState> | null>(null)
  const [pending, setPending] = useState<Map<string, number>>(new Map())
  useEffect(() => {
    if (version === 0) return // the page has not read the flag yet: its first load asks
    void api.GET('/api/flags/{flagName}/environments', { params: { path: { flagName: name } } }).then(({ data }) => {
      if (data) setStates(data as Record<string, FlagState>)
    })
    void api.GET('/api/change-requests', { params: { query: { flag: name } } }).then(({ data }) => {
      if (data) setPending(pendingCounts(data as ListedRequest[], name))
    })
  }, [name, version])
  return { states, pending }
}
