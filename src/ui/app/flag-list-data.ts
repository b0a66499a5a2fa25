/**
 * What the Flags page reads (docs/ui.md#the-flags-table): the flags of the chosen environment, of
 * every other one the person may read (a column each), their uses over the last 7 days, and the
 * change requests (`pending` marks and the `Needs your review` counter); read again whenever a flag
 * changes anywhere.
 */

import { useEffect, useMemo, useState } from 'preact/hooks'
import { api, messageOf } from './api.ts'
import { holdsIn, useEnvironments } from './environment-choice.ts'
import type { ListedRequest } from './flag-counts.ts'
import type { EnvironmentColumn, TableFlag, Use } from './flag-table.tsx'
import { listenForChanges } from './live.ts'

/** Request states that mark a flag `pending` in its environment's column (docs/ui.md#the-flags-table). */
const PENDING = new Set(['open', 'approved', 'scheduled'])

/** How many days the Uses column counts. */
export const USE_DAYS = 7
const DAY_MS = 86_400_000

/** Everything the Flags page shows, loaded and kept fresh. */
export function useFlagListData(permissions: readonly string[]) {
  const [flags, setFlags] = useState<TableFlag[] | null>(null)
  const environments = useEnvironments()
  const [others, setOthers] = useState<ReadonlyMap<string, ReadonlyMap<string, TableFlag>>>(new Map())
  const [requests, setRequests] = useState<readonly ListedRequest[]>([])
  const [error, setError] = useState<string | null>(null)
  const [usage, setUsage] = useState<ReadonlyMap<string, Use>>(new Map())
  async function load() {
    // the browser's clock: the last 7 days as the person counts them
    const since = new Date(Date.now() - USE_DAYS * DAY_MS).toISOString()
    const [{ data, error: problem }, used] = await Promise.all([
      api.GET('/api/flags'),
      api.GET('/api/usage', { params: { query: { since } } }),
    ])
    if (data) setFlags(data as TableFlag[])
    else setError(messageOf(problem))
    if (used.data) setUsage(new Map((used.data as Use[]).map((u) => [u.name, u])))
    // every other environment this person may read: a column each
    const readable = environments.list.filter((e) => e.name !== environments.current && holdsIn(permissions, 'flag:read', e.name))
    const lists = await Promise.all(
      readable.map((e) => api.GET('/api/flags', { params: { query: { environment: e.name } } }).then((r) => [e.name, r.data] as const)),
    )
    const listed = await api.GET('/api/change-requests', { params: { query: {} } })
    setRequests((listed.data ?? []) as ListedRequest[])
    setOthers(
      new Map(lists.flatMap(([env, list]) => (list ? [[env, new Map((list as TableFlag[]).map((f) => [f.name, f]))] as const] : []))),
    )
  }
  useEffect(() => {
    void load()
    return listenForChanges((type) => type.startsWith('flag.') && void load())
  }, [])
  // per environment, each flag's newest pending request (the list is newest first): its `pending` mark links there
  const pending = useMemo(() => {
    const byEnvironment = new Map<string, Map<string, string>>()
    for (const r of requests)
      if (PENDING.has(r.state)) {
        const here = byEnvironment.get(r.environment) ?? new Map<string, string>()
        for (const c of r.changes) if (!here.has(c.flag)) here.set(c.flag, r.id)
        byEnvironment.set(r.environment, here)
      }
    return byEnvironment
  }, [requests])
  const chosenFlags = useMemo(() => new Map((flags ?? []).map((f) => [f.name, f])), [flags])
  const columns: EnvironmentColumn[] = environments.list
    .filter((e) => e.name === environments.current || others.has(e.name))
    .map((e) => ({
      environment: e.name,
      chosen: e.name === environments.current,
      flags: e.name === environments.current ? chosenFlags : (others.get(e.name) ?? new Map()),
      canWrite: holdsIn(permissions, 'flag:write', e.name),
      protected: e.protected,
      requiredApprovals: e.requiredApprovals,
      pending: pending.get(e.name) ?? new Map(),
    }))
  return { flags, columns, requests, pending, usage, error, setError, current: environments.current }
}
