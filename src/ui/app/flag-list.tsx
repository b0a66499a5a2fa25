/**
 * The flags as a tree of `/` groups, searchable by name, each with its type and effective value; a
 * BOOLEAN flag is a switch (`role="switch"`) named after the flag, toggled in one click when the
 * person may write flags. Changes made elsewhere arrive through the change stream.
 */

import { useEffect, useMemo, useState } from 'preact/hooks'
import { api, messageOf } from './api.ts'
import { listenForChanges } from './live.ts'
import { link } from './router.ts'

type Flag = { name: string; type: string; value?: unknown; defaultValue: unknown; valueExists: boolean; revision: number }

const effective = (f: Flag) => (f.valueExists ? f.value : f.defaultValue)

function Switch({ flag, canWrite, onError }: { flag: Flag; canWrite: boolean; onError: (m: string) => void }) {
  const on = effective(flag) === true
  async function toggle() {
    const { error } = await api.PUT('/api/flags/{flagName}', { params: { path: { flagName: flag.name }, header: { 'If-Match': `"${flag.revision}"` } }, body: { value: !on } })
    if (error) onError(messageOf(error))
  }
  return <button type="button" role="switch" aria-checked={on} aria-label={flag.name} class={on ? 'switch on' : 'switch'} disabled={!canWrite} onClick={toggle} />
}

export function FlagList({ canWrite }: { canWrite: boolean }) {
  const [flags, setFlags] = useState<Flag[] | null>(null)
  const [query, setQuery] = useState('')
  const [error, setError] = useState<string | null>(null)
  async function load() {
    const { data, error: problem } = await api.GET('/api/flags')
    if (data) setFlags(data as Flag[])
    else setError(messageOf(problem))
  }
  useEffect(() => {
    void load()
    return listenForChanges(() => void load())
  }, [])
  const groups = useMemo(() => {
    const shown = (flags ?? []).filter((f) => f.name.toLowerCase().includes(query.toLowerCase()))
    const byGroup = new Map<string, Flag[]>()
    for (const f of shown) {
      const group = f.name.includes('/') ? f.name.slice(0, f.name.lastIndexOf('/')) : ''
      byGroup.set(group, [...(byGroup.get(group) ?? []), f])
    }
    return [...byGroup.entries()]
  }, [flags, query])
  return (
    <section class="flags">
      <label for="search">Search flags</label>
      <input id="search" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} placeholder="name contains…" />
      {error && <p class="error" role="alert">{error}</p>}
      {flags === null ? <p>Loading…</p> : groups.length === 0 ? <p>No flags{query ? ' match' : ' yet'}.</p> : null}
      {groups.map(([group, list]) => (
        <div class="group" key={group}>
          <h2>{group || '(top level)'}</h2>
          <ul>
            {list.map((f) => (
              <li key={f.name} data-flag={f.name}>
                <a class="name" {...link(`flags/${f.name}`)}>{f.name.slice(group ? group.length + 1 : 0)}</a>
                <span class="type">{f.type}</span>
                {f.type === 'BOOLEAN' ? <Switch flag={f} canWrite={canWrite} onError={setError} /> : <code class="value">{JSON.stringify(effective(f))}</code>}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  )
}
