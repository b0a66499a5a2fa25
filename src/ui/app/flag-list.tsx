/**
 * The flags a team works from (docs/ui.md): a tree of `/` groups, searchable by name and
 * filtered by type, state and "has rules", or one list by last change; each flag with its
 * description, type, effective value, whether it is disabled and its targeting in a few words
 * ("20 % on · 2 rules"). A BOOLEAN flag's value is a switch (`role="switch"`) named after the flag,
 * toggled in one click when the person may write flags. Changes made elsewhere arrive through the
 * change stream.
 */

import { useEffect, useMemo, useState } from 'preact/hooks'
import type { Flag as DomainFlag } from '../../domain/flag.ts'
import { matchesFilter } from '../../domain/flag-lifecycle.ts'
import { grants } from '../../domain/permission.ts'
import { api, messageOf } from './api.ts'
import { ArchivedFlags } from './archived-flags.tsx'
import { countOf } from './count-words.ts'
import { holdsIn, useEnvironments } from './environment-choice.ts'
import { TypeOptions } from './flag-fields.tsx'
import { type FlagGroup, flagTree } from './flag-tree.ts'
import { LifecycleFilters, StaleMark } from './lifecycle-filters.tsx'
import { type LifecycleFilterInput, listFilterOf } from './lifecycle-words.ts'
import { listenForChanges } from './live.ts'
import { localTime } from './local-time.ts'
import { link, useSearch } from './router.ts'
import { targetingSummary } from './rule-words.ts'
import { EnvironmentCell, type ListedFlag, Switch, shownValue } from './value-switch.tsx'

/** A listed flag with its lifecycle (docs/api.md#lifecycle). */
type Flag = ListedFlag & { kind?: string; owner?: string; tags?: string[]; potentiallyStale?: boolean; createdAt?: string }

/** A flag's usage over the last 30 days, as `GET /api/usage` lists it. */
type Use = { name: string; total: number; lastEvaluatedAt: string | null; lastServedInProcessAt: string | null; stale: boolean }

/** The tooltip of a flag's uses: when last evaluated, and when last served to an in-process provider. */
function usesTitle(use: Use): string {
  const evaluated = use.lastEvaluatedAt ? `last evaluated ${localTime(use.lastEvaluatedAt)}` : 'not evaluated in 30 days'
  return use.lastServedInProcessAt ? `${evaluated}; last served in-process ${localTime(use.lastServedInProcessAt)}` : evaluated
}

/** 1520 → "1.5k". */
const compact = (n: number) => (n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(1)}k` : `${(n / 1_000_000).toFixed(1)}M`)

/** One group: a disclosure (open unless the person closed it; always open while searching) over its subgroups and flags. */
function GroupItems(props: GroupProps) {
  const { group, canWrite, closed, searching, onToggle, onError, usage, columns } = props
  return (
    <ul>
      {group.groups.map((g) => (
        <li key={g.path} class="group">
          <details open={searching || !closed.has(g.path)} onToggle={(e) => onToggle(g.path, e.currentTarget.open)}>
            <summary title={g.path}>
              <span class="group-name">{g.name}</span> <span class="count">{countOf(g.total, 'flag')}</span>
            </summary>
            <GroupItems {...props} group={g} />
          </details>
        </li>
      ))}
      {group.flags.map((f) => (
        <FlagItem
          key={f.name}
          flag={f}
          shownName={f.name.slice(group.path ? group.path.length + 1 : 0)}
          canWrite={canWrite}
          onError={onError}
          use={usage.get(f.name)}
          columns={columns}
        />
      ))}
    </ul>
  )
}

/** One flag's row: name and description, targeting in a few words, state, type, value or switch. */
function FlagItem({
  flag: f,
  shownName,
  canWrite,
  onError,
  use,
  columns,
}: {
  flag: Flag
  shownName: string
  canWrite: boolean
  onError: (m: string) => void
  use?: Use | undefined
  columns: readonly Column[]
}) {
  const summary = targetingSummary(f.targeting)
  return (
    <li class="flag" data-flag={f.name}>
      <span class="what">
        <a class="name" {...link(`flags/${f.name}`)}>
          {shownName}
        </a>
        {f.description && <span class="desc">{f.description}</span>}
      </span>
      {f.enabled === false && <span class="chip off">disabled</span>}
      <StaleMark flag={f} />
      {use?.stale && (
        <span class="chip stale" title={use.lastEvaluatedAt ? `last evaluated ${localTime(use.lastEvaluatedAt)}` : 'never evaluated'}>
          stale
        </span>
      )}
      {use && (
        <span class="uses" title={usesTitle(use)}>
          {use.total === 0
            ? use.lastServedInProcessAt
              ? 'in-process'
              : 'unused'
            : `${compact(use.total)} ${use.total === 1 ? 'use' : 'uses'}`}
        </span>
      )}
      {summary && <span class="chip">{summary}</span>}
      <span class="type">{f.type}</span>
      {columns.length === 0 ? (
        f.type === 'BOOLEAN' ? (
          <Switch flag={f} canWrite={canWrite} onError={onError} />
        ) : (
          <code class="value">{shownValue(f)}</code>
        )
      ) : (
        <span class="env-cells">
          {columns.map((c) => (
            <EnvironmentCell
              key={c.environment}
              flag={c.chosen ? f : c.flags.get(f.name)}
              environment={c.environment}
              chosen={c.chosen}
              canWrite={c.canWrite}
              onError={onError}
            />
          ))}
        </span>
      )}
    </li>
  )
}

/** One environment's column (docs/ui.md#environments): shown when there are several. */
interface Column {
  environment: string
  chosen: boolean
  flags: ReadonlyMap<string, Flag>
  canWrite: boolean
}

interface GroupProps {
  columns: readonly Column[]
  usage: ReadonlyMap<string, Use>
  group: FlagGroup<Flag>
  canWrite: boolean
  closed: ReadonlySet<string>
  searching: boolean
  onToggle: (path: string, open: boolean) => void
  onError: (message: string) => void
}

/** The flag list, or its archived view (`?archived=true`, docs/ui.md#lifecycle-archive-and-prerequisites). */
export function FlagList({ canWrite, permissions }: { canWrite: boolean; permissions: readonly string[] }) {
  const archived = new URLSearchParams(useSearch()).get('archived') === 'true'
  // restoring, like archiving, changes every environment: the unscoped permission
  if (archived) return <ArchivedFlags canRestore={grants(permissions, 'flag:write')} />
  return <LiveFlags canWrite={canWrite} permissions={permissions} />
}

function LiveFlags({ canWrite, permissions }: { canWrite: boolean; permissions: readonly string[] }) {
  const [flags, setFlags] = useState<Flag[] | null>(null)
  const environments = useEnvironments()
  const [others, setOthers] = useState<ReadonlyMap<string, ReadonlyMap<string, Flag>>>(new Map())
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
    setOthers(new Map(lists.flatMap(([env, list]) => (list ? [[env, new Map((list as Flag[]).map((f) => [f.name, f]))] as const] : []))))
  }
  const columns: Column[] =
    others.size === 0
      ? []
      : environments.list
          .filter((e) => e.name === environments.current || others.has(e.name))
          .map((e) => ({
            environment: e.name,
            chosen: e.name === environments.current,
            flags: others.get(e.name) ?? new Map(),
            canWrite: holdsIn(permissions, 'flag:write', e.name),
          }))
  useEffect(() => {
    void load()
    return listenForChanges((type) => type.startsWith('flag.') && void load())
  }, [])
  const [type, setType] = useState('')
  const [state, setState] = useState('')
  const [withRules, setWithRules] = useState(false)
  const [sort, setSort] = useState<'name' | 'changed'>('name')
  const [life, setLife] = useState<LifecycleFilterInput>({ kind: '', owner: '', tags: '' })
  const owners = useMemo(() => [...new Set((flags ?? []).flatMap((f) => (f.owner ? [f.owner] : [])))].sort(), [flags])
  const shown = useMemo(() => {
    const lifecycle = listFilterOf(life, false)
    return (flags ?? []).filter(
      (f) =>
        f.name.toLowerCase().includes(query.toLowerCase()) &&
        (type === '' || f.type === type) &&
        (state === '' || stateHolds(state, f, usage)) &&
        (!withRules || (f.targeting !== undefined && f.targeting !== null)) &&
        matchesFilter(f as unknown as DomainFlag, lifecycle),
    )
  }, [flags, query, type, state, withRules, usage, life])
  const tree = useMemo(() => flagTree(shown), [shown])
  const recent = useMemo(
    () => (sort === 'changed' ? [...shown].sort((a, b) => String(b.updatedAt).localeCompare(String(a.updatedAt))) : []),
    [shown, sort],
  )
  const filtering = type !== '' || state !== '' || withRules || life.kind !== '' || life.owner !== '' || life.tags.trim() !== ''
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
      <label for="search">Search flags</label>
      <input id="search" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} placeholder="name contains…" />
      <div class="list-filters">
        <div class="field">
          <label for="filter-type">Type</label>
          <select id="filter-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            <option value="">any type</option>
            <TypeOptions />
          </select>
        </div>
        <div class="field">
          <label for="filter-state">State</label>
          <select id="filter-state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
            <option value="">enabled or disabled</option>
            <option value="enabled">enabled</option>
            <option value="disabled">disabled</option>
            <option value="stale">stale (unused)</option>
            <option value="old">potentially stale (old)</option>
          </select>
        </div>
        <div class="field">
          <label for="sort">Sort by</label>
          <select id="sort" value={sort} onChange={(e) => setSort(e.currentTarget.value as 'name' | 'changed')}>
            <option value="name">name, in groups</option>
            <option value="changed">last change</option>
          </select>
        </div>
        <div class="field inline">
          <input id="filter-rules" type="checkbox" checked={withRules} onChange={(e) => setWithRules(e.currentTarget.checked)} />
          <label for="filter-rules">Has rules</label>
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
      {tree.total > 0 && sort === 'changed' && (
        <nav class="tree" aria-label="Flags by last change">
          <ul>
            {recent.map((f) => (
              <FlagItem
                key={f.name}
                flag={f}
                shownName={f.name}
                canWrite={canWrite}
                onError={setError}
                use={usage.get(f.name)}
                columns={columns}
              />
            ))}
          </ul>
        </nav>
      )}
      {tree.total > 0 && sort === 'name' && (
        <nav class="tree" aria-label="Flags by group">
          <GroupItems
            group={tree}
            canWrite={canWrite}
            closed={closed}
            searching={searching}
            onToggle={onToggle}
            onError={setError}
            usage={usage}
            columns={columns}
          />
        </nav>
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
