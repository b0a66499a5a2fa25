/**
 * The Flags page a team works from (docs/ui.md#the-flags-table): four counters, one row of filters
 * kept in the address, and one table of every flag in `/` groups (or by last change) with a column
 * per environment the person may read. Changes made elsewhere arrive through the change stream.
 */

import { useMemo, useState } from 'preact/hooks'
import type { Flag as DomainFlag } from '../../domain/flag.ts'
import { matchesFilter } from '../../domain/flag-lifecycle.ts'
import { grants } from '../../domain/permission.ts'
import { ArchivedFlags } from './archived-flags.tsx'
import { emptyListWords } from './empty-list-words.ts'
import { FlagCounters } from './flag-counters.tsx'
import { changedLately, countsOf, mayReview, rollingOut } from './flag-counts.ts'
import { FlagFilters, filtering, filtersOf, ListTools } from './flag-filters.tsx'
import { useFlagListData } from './flag-list-data.ts'
import { FlagTable, type TableFlag, type Use } from './flag-table.tsx'
import { flagTree } from './flag-tree.ts'
import { useFlagShortcuts } from './keyboard-shortcuts.tsx'
import { listFilterOf } from './lifecycle-words.ts'
import { useSearch } from './router.ts'

/** A listed flag with its lifecycle (docs/api.md#lifecycle). */
type Flag = TableFlag

/** The flag list, or its archived view (`?archived=true`, docs/ui.md#lifecycle-archive-and-prerequisites). */
export function FlagList({
  permissions,
  me,
  query,
  onQuery,
}: {
  canWrite: boolean
  permissions: readonly string[]
  me: string
  /** The search text, held by the app so that it outlives the page remade per environment. */
  query: string
  onQuery: (q: string) => void
}) {
  const archived = new URLSearchParams(useSearch()).get('archived') === 'true'
  // restoring, like archiving, changes every environment: the unscoped permission
  if (archived) return <ArchivedFlags canRestore={grants(permissions, 'flag:write')} />
  return <LiveFlags permissions={permissions} me={me} query={query} onQuery={onQuery} />
}

function LiveFlags({
  permissions,
  me,
  query,
  onQuery,
}: {
  permissions: readonly string[]
  me: string
  query: string
  onQuery: (q: string) => void
}) {
  const { flags, columns, requests, pending, usage, error, setError, current } = useFlagListData(permissions)
  // what the last switch flipped in the table did, said near it (docs/ui.md#common-tasks)
  const [written, setWritten] = useState('')
  // the groups a person closed stay closed while flags change around them
  const [closed, setClosed] = useState<ReadonlySet<string>>(new Set())
  useFlagShortcuts()
  // the filters live in the address, so a filtered view can be shared (docs/ui.md#the-flags-table)
  const search = useSearch()
  const filters = useMemo(() => filtersOf(search), [search])
  const pendingHere = pending.get(current ?? '') ?? new Map<string, string>()
  const toReview = useMemo(() => requests.filter((r) => mayReview(r, me, permissions)), [requests, me, permissions])
  const reviewFlags = useMemo(() => new Set(toReview.flatMap((r) => r.changes.map((c) => c.flag))), [toReview])
  // the browser's clock, read when the flags or the address change
  const at = useMemo(() => Date.now(), [flags, search])
  const counts = useMemo(() => (flags === null ? null : countsOf(flags, usage, toReview.length, at)), [flags, usage, toReview, at])
  const owners = useMemo(() => [...new Set((flags ?? []).flatMap((f) => (f.owner ? [f.owner] : [])))].sort(), [flags])
  const shown = useMemo(() => {
    const f = filters
    const lifecycle = listFilterOf(f.life, false)
    return (flags ?? []).filter(
      (flag) =>
        flag.name.toLowerCase().includes(query.toLowerCase()) &&
        (f.type === '' || flag.type === f.type) &&
        (f.state === '' || stateHolds(f.state, flag, usage)) &&
        (!f.rules || (flag.targeting !== undefined && flag.targeting !== null)) &&
        (!f.rolling || rollingOut(flag)) &&
        (!f.pending || pendingHere.has(flag.name)) &&
        (!f.review || reviewFlags.has(flag.name)) &&
        (!f.changed || changedLately(flag, at)) &&
        matchesFilter(flag as unknown as DomainFlag, lifecycle),
    )
  }, [flags, query, filters, pendingHere, reviewFlags, usage, at])
  const tree = useMemo(() => flagTree(shown), [shown])
  const recent = useMemo(
    () => (filters.sort === 'changed' ? [...shown].sort((a, b) => String(b.updatedAt).localeCompare(String(a.updatedAt))) : []),
    [shown, filters.sort],
  )
  const searching = query !== '' || filtering(filters)
  const onToggle = (path: string, open: boolean) => {
    if (searching || open !== closed.has(path)) return // searching opens everything without forgetting what was closed
    const next = new Set(closed)
    if (open) next.delete(path)
    else next.add(path)
    setClosed(next)
  }
  return (
    <section class="flags">
      <div class="flags-head">
        <h1>Flags</h1>
        <FlagCounters counts={counts} />
        <ListTools sort={filters.sort} query={query} onQuery={onQuery} />
      </div>
      <FlagFilters filters={filters} owners={owners} />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <p class="flag-status" role="status" aria-live="polite">
        {written}
      </p>
      {flags === null ? <p>Loading…</p> : tree.total === 0 ? <p>{emptyListWords(filters, query, searching)}</p> : null}
      {tree.total > 0 && (
        <FlagTable
          tree={tree}
          flat={filters.sort === 'changed' ? recent : null}
          columns={columns}
          usage={usage}
          closed={closed}
          searching={searching}
          onToggle={onToggle}
          onError={setError}
          onWritten={setWritten}
        />
      )}
    </section>
  )
}

/** Whether flag `f` is in the list's State filter's `state`. */
function stateHolds(state: string, f: Flag, usage: ReadonlyMap<string, Use>): boolean {
  if (state === 'stale') return usage.get(f.name)?.stale === true
  if (state === 'old') return f.potentiallyStale === true
  return (state === 'disabled') === (f.enabled === false)
}
