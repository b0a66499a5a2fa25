/**
 * The Flags page a team works from (docs/ui.md#the-flags-table): one table of every flag in `/`
 * groups (or by last change), searchable by name and filtered by type, state, "has rules", kind,
 * owner and tags, with a column per environment the person may read. Changes made elsewhere arrive
 * through the change stream.
 */

import { useEffect, useMemo, useState } from 'preact/hooks'
import type { Flag as DomainFlag } from '../../domain/flag.ts'
import { matchesFilter } from '../../domain/flag-lifecycle.ts'
import { grants } from '../../domain/permission.ts'
import { api, messageOf } from './api.ts'
import { ArchivedFlags } from './archived-flags.tsx'
import { holdsIn, useEnvironments } from './environment-choice.ts'
import { TypeOptions } from './flag-fields.tsx'
import { type EnvironmentColumn, FlagTable, type TableFlag, type Use } from './flag-table.tsx'
import { flagTree } from './flag-tree.ts'
import { LifecycleFilters } from './lifecycle-filters.tsx'
import { type LifecycleFilterInput, listFilterOf } from './lifecycle-words.ts'
import { listenForChanges } from './live.ts'
import { link, replaceSearch, useSearch } from './router.ts'

/** A listed flag with its lifecycle (docs/api.md#lifecycle). */
type Flag = TableFlag

/** Request states that mark a flag `pending` in its environment's column (docs/ui.md#the-flags-table). */
const PENDING = new Set(['open', 'approved', 'scheduled'])

/** The flag list, or its archived view (`?archived=true`, docs/ui.md#lifecycle-archive-and-prerequisites). */
export function FlagList({ permissions }: { canWrite: boolean; permissions: readonly string[] }) {
  const archived = new URLSearchParams(useSearch()).get('archived') === 'true'
  // restoring, like archiving, changes every environment: the unscoped permission
  if (archived) return <ArchivedFlags canRestore={grants(permissions, 'flag:write')} />
  return <LiveFlags permissions={permissions} />
}

function LiveFlags({ permissions }: { permissions: readonly string[] }) {
  const [flags, setFlags] = useState<Flag[] | null>(null)
  const environments = useEnvironments()
  const [others, setOthers] = useState<ReadonlyMap<string, ReadonlyMap<string, Flag>>>(new Map())
  const [pending, setPending] = useState<ReadonlyMap<string, ReadonlyMap<string, string>>>(new Map())
  const [query, setQuery] = useState('')
  const [error, setError] = useState<string | null>(null)
  // the groups a person closed stay closed while flags change around them
  const [closed, setClosed] = useState<ReadonlySet<string>>(new Set())
  const [usage, setUsage] = useState<ReadonlyMap<string, Use>>(new Map())
  async function load() {
    const [{ data, error: problem }, used] = await Promise.all([api.GET('/api/flags'), api.GET('/api/usage')])
    if (data) setFlags(data as Flag[])
    else setError(messageOf(problem))
    if (used.data) setUsage(new Map((used.data as Use[]).map((u) => [u.name, u])))
    // every other environment this person may read: a column each
    const readable = environments.list.filter((e) => e.name !== environments.current && holdsIn(permissions, 'flag:read', e.name))
    const lists = await Promise.all(
      readable.map((e) => api.GET('/api/flags', { params: { query: { environment: e.name } } }).then((r) => [e.name, r.data] as const)),
    )
    const requests = await api.GET('/api/change-requests', { params: { query: {} } })
    // per environment, each flag's newest pending request (the list is newest first): its `pending` mark links there
    const byEnvironment = new Map<string, Map<string, string>>()
    for (const r of (requests.data ?? []) as { id: string; environment: string; state: string; changes: { flag: string }[] }[])
      if (PENDING.has(r.state)) {
        const here = byEnvironment.get(r.environment) ?? new Map<string, string>()
        for (const c of r.changes) if (!here.has(c.flag)) here.set(c.flag, r.id)
        byEnvironment.set(r.environment, here)
      }
    setPending(byEnvironment)
    setOthers(new Map(lists.flatMap(([env, list]) => (list ? [[env, new Map((list as Flag[]).map((f) => [f.name, f]))] as const] : []))))
  }
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
  useEffect(() => {
    void load()
    return listenForChanges((type) => type.startsWith('flag.') && void load())
  }, [])
  // the filters live in the address, so a filtered view can be shared (docs/ui.md#the-flags-table)
  const params = new URLSearchParams(useSearch())
  const setParam = (key: string, value: string) => {
    const next = new URLSearchParams(location.search)
    if (value === '') next.delete(key)
    else next.set(key, value)
    replaceSearch(next.toString())
  }
  const type = params.get('type') ?? ''
  const state = params.get('state') ?? ''
  const withRules = params.get('rules') === 'true'
  const rolling = params.get('rolling') === 'true'
  const inReview = params.get('pending') === 'true'
  const sort = params.get('sort') === 'changed' ? 'changed' : 'name'
  const life: LifecycleFilterInput = { kind: params.get('kind') ?? '', owner: params.get('owner') ?? '', tags: params.get('tags') ?? '' }
  const setLife = (next: LifecycleFilterInput) => {
    const all = new URLSearchParams(location.search)
    for (const key of ['kind', 'owner', 'tags'] as const) {
      if (next[key] === '') all.delete(key)
      else all.set(key, next[key])
    }
    replaceSearch(all.toString())
  }
  const pendingHere = pending.get(environments.current ?? '') ?? new Map<string, string>()
  const owners = useMemo(() => [...new Set((flags ?? []).flatMap((f) => (f.owner ? [f.owner] : [])))].sort(), [flags])
  const shown = useMemo(() => {
    const lifecycle = listFilterOf(life, false)
    return (flags ?? []).filter(
      (f) =>
        f.name.toLowerCase().includes(query.toLowerCase()) &&
        (type === '' || f.type === type) &&
        (state === '' || stateHolds(state, f, usage)) &&
        (!withRules || (f.targeting !== undefined && f.targeting !== null)) &&
        (!rolling || f.rollout?.status === 'running') &&
        (!inReview || pendingHere.has(f.name)) &&
        matchesFilter(f as unknown as DomainFlag, lifecycle),
    )
  }, [flags, query, type, state, withRules, rolling, inReview, pendingHere, usage, life.kind, life.owner, life.tags])
  const tree = useMemo(() => flagTree(shown), [shown])
  const recent = useMemo(
    () => (sort === 'changed' ? [...shown].sort((a, b) => String(b.updatedAt).localeCompare(String(a.updatedAt))) : []),
    [shown, sort],
  )
  const filtering =
    type !== '' || state !== '' || withRules || rolling || inReview || life.kind !== '' || life.owner !== '' || life.tags.trim() !== ''
  const searching = query !== '' || filtering
  const onToggle = (path: string, open: boolean) => {
    if (searching || open !== closed.has(path)) return // searching opens everything without forgetting what was closed
    const next = new Set(closed)
    if (open) next.delete(path)
    else next.add(path)
    setClosed(next)
  }
  return (
    <section class="flags">
      <h1>Flags</h1>
      <div class="list-filters">
        <div class="field">
          <label for="search">Search flags</label>
          <input id="search" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} placeholder="name contains…" />
        </div>
        <div class="field">
          <label for="filter-type">Type</label>
          <select id="filter-type" value={type} onChange={(e) => setParam('type', e.currentTarget.value)}>
            <option value="">any type</option>
            <TypeOptions />
          </select>
        </div>
        <div class="field">
          <label for="filter-state">State</label>
          <select id="filter-state" value={state} onChange={(e) => setParam('state', e.currentTarget.value)}>
            <option value="">enabled or disabled</option>
            <option value="enabled">enabled</option>
            <option value="disabled">disabled</option>
            <option value="stale">stale (unused)</option>
            <option value="old">potentially stale (old)</option>
          </select>
        </div>
        <div class="field">
          <label for="sort">Sort by</label>
          <select id="sort" value={sort} onChange={(e) => setParam('sort', e.currentTarget.value === 'changed' ? 'changed' : '')}>
            <option value="name">name, in groups</option>
            <option value="changed">last change</option>
          </select>
        </div>
        <div class="field inline">
          <input
            id="filter-rules"
            type="checkbox"
            checked={withRules}
            onChange={(e) => setParam('rules', e.currentTarget.checked ? 'true' : '')}
          />
          <label for="filter-rules">Has rules</label>
        </div>
        <div class="field inline">
          <input
            id="filter-rolling"
            type="checkbox"
            checked={rolling}
            onChange={(e) => setParam('rolling', e.currentTarget.checked ? 'true' : '')}
          />
          <label for="filter-rolling">Rolling out</label>
        </div>
        <div class="field inline">
          <input
            id="filter-pending"
            type="checkbox"
            checked={inReview}
            onChange={(e) => setParam('pending', e.currentTarget.checked ? 'true' : '')}
          />
          <label for="filter-pending">Pending review</label>
        </div>
        <LifecycleFilters value={life} owners={owners} onChange={setLife} />
        <a class="archived-link" {...link('?archived=true')}>
          Archived flags
        </a>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {flags === null ? <p>Loading…</p> : tree.total === 0 ? <p>No flags{searching ? ' match' : ' yet'}.</p> : null}
      {tree.total > 0 && (
        <FlagTable
          tree={tree}
          flat={sort === 'changed' ? recent : null}
          columns={columns}
          usage={usage}
          closed={closed}
          searching={searching}
          onToggle={onToggle}
          onError={setError}
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
