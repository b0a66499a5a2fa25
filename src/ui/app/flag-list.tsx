/**
 * The flags as a tree of `/` groups, searchable by name, each with its type and effective value; a
 * BOOLEAN flag is a switch (`role="switch"`) named after the flag, toggled in one click when the
 * person may write flags. Changes made elsewhere arrive through the change stream.
 */

import { useEffect, useMemo, useState } from 'preact/hooks'
import { api, messageOf } from './api.ts'
import { type FlagGroup, flagTree } from './flag-tree.ts'
import { listenForChanges } from './live.ts'
import { link } from './router.ts'

type Flag = {
  name: string
  type: string
  value?: unknown
  defaultValue: unknown
  valueExists: boolean
  revision: number
  chancePercentB?: number
}

/** What an application gets: the value, or for an A/B test without one, the split it runs. */
const shownValue = (f: Flag) =>
  f.type === 'AB-TEST' && !f.valueExists
    ? `split ${100 - (f.chancePercentB ?? 50)}/${f.chancePercentB ?? 50}`
    : JSON.stringify(effective(f))

const effective = (f: Flag) => (f.valueExists ? f.value : f.defaultValue)

function Switch({ flag, canWrite, onError }: { flag: Flag; canWrite: boolean; onError: (m: string) => void }) {
  const on = effective(flag) === true
  async function toggle() {
    const { error } = await api.PUT('/api/flags/{flagName}', {
      params: { path: { flagName: flag.name }, header: { 'If-Match': `"${flag.revision}"` } },
      body: { value: !on },
    })
    if (error) onError(messageOf(error))
  }
  return (
    <button
      type="button"
      role="switch"
      aria-checked={on}
      aria-label={flag.name}
      class={on ? 'switch on' : 'switch'}
      disabled={!canWrite}
      onClick={toggle}
    />
  )
}

/** One group: a disclosure (open unless the person closed it; always open while searching) over its subgroups and flags. */
function GroupItems({ group, canWrite, closed, searching, onToggle, onError }: GroupProps) {
  return (
    <ul>
      {group.groups.map((g) => (
        <li key={g.path} class="group">
          <details open={searching || !closed.has(g.path)} onToggle={(e) => onToggle(g.path, e.currentTarget.open)}>
            <summary title={g.path}>
              <span class="group-name">{g.name}</span> <span class="count">{g.total === 1 ? '1 flag' : `${g.total} flags`}</span>
            </summary>
            <GroupItems group={g} canWrite={canWrite} closed={closed} searching={searching} onToggle={onToggle} onError={onError} />
          </details>
        </li>
      ))}
      {group.flags.map((f) => (
        <li key={f.name} class="flag" data-flag={f.name}>
          <a class="name" {...link(`flags/${f.name}`)}>
            {f.name.slice(group.path ? group.path.length + 1 : 0)}
          </a>
          <span class="type">{f.type}</span>
          {f.type === 'BOOLEAN' ? <Switch flag={f} canWrite={canWrite} onError={onError} /> : <code class="value">{shownValue(f)}</code>}
        </li>
      ))}
    </ul>
  )
}

interface GroupProps {
  group: FlagGroup<Flag>
  canWrite: boolean
  closed: ReadonlySet<string>
  searching: boolean
  onToggle: (path: string, open: boolean) => void
  onError: (message: string) => void
}

export function FlagList({ canWrite }: { canWrite: boolean }) {
  const [flags, setFlags] = useState<Flag[] | null>(null)
  const [query, setQuery] = useState('')
  const [error, setError] = useState<string | null>(null)
  // the groups a person closed stay closed while flags change around them
  const [closed, setClosed] = useState<ReadonlySet<string>>(new Set())
  async function load() {
    const { data, error: problem } = await api.GET('/api/flags')
    if (data) setFlags(data as Flag[])
    else setError(messageOf(problem))
  }
  useEffect(() => {
    void load()
    return listenForChanges(() => void load())
  }, [])
  const tree = useMemo(() => flagTree((flags ?? []).filter((f) => f.name.toLowerCase().includes(query.toLowerCase()))), [flags, query])
  const searching = query !== ''
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
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {flags === null ? <p>Loading…</p> : tree.total === 0 ? <p>No flags{query ? ' match' : ' yet'}.</p> : null}
      {tree.total > 0 && (
        <nav class="tree" aria-label="Flags by group">
          <GroupItems group={tree} canWrite={canWrite} closed={closed} searching={searching} onToggle={onToggle} onError={setError} />
        </nav>
      )}
    </section>
  )
}
