/**
 * The archived flags (docs/ui.md#lifecycle-archive-and-prerequisites), the flag list's view at
 * `/ui/?archived=true`: each archived flag with its description and a `Restore` button that brings it
 * back exactly as it was.
 */

import { useEffect, useState } from 'preact/hooks'
import { api } from './api.ts'
import { listenForChanges } from './live.ts'
import { localTime } from './local-time.ts'
import { done, type Notice, NoticeLine, refused } from './notice.tsx'
import { link } from './router.ts'

type Archived = { name: string; type: string; description?: string; updatedAt?: string }

/** The archived view of the flag list, `Restore` on each when `canRestore`. */
export function ArchivedFlags({ canRestore }: { canRestore: boolean }) {
  const [flags, setFlags] = useState<Archived[] | null>(null)
  const [notice, setNotice] = useState<Notice>(null)
  async function load() {
    const { data, error } = await api.GET('/api/flags', { params: { query: { archived: true } } })
    if (data) setFlags(data as Archived[])
    else setNotice(refused(error))
  }
  useEffect(() => {
    void load()
    return listenForChanges((type) => type.startsWith('flag.') && void load())
  }, [])
  async function restore(name: string) {
    const { data, error } = await api.POST('/api/flags/{flagName}/restore', { params: { path: { flagName: name } } })
    setNotice(data ? done(`${name} restored: applications get it again`) : refused(error))
    void load()
  }
  return (
    <section class="flags archived">
      <p>
        <a {...link('')}>← All flags</a>
      </p>
      <h1>Archived flags</h1>
      <p class="meta">
        Every application gets FLAG_NOT_FOUND for these; their definition, state in every environment, usage and history are kept. Restoring
        one brings it back exactly as it was.
      </p>
      <NoticeLine notice={notice} />
      {flags === null ? <p>Loading…</p> : flags.length === 0 ? <p>No archived flags.</p> : null}
      {flags && flags.length > 0 && (
        <ul class="archived-list" aria-label="Archived flags">
          {flags.map((f) => (
            <li key={f.name} class="flag" data-flag={f.name}>
              <span class="what">
                <a class="name" {...link(`flags/${f.name}`)}>
                  {f.name}
                </a>
                {f.description && <span class="desc">{f.description}</span>}
              </span>
              <span class="type">{f.type}</span>
              {f.updatedAt && <span class="uses">archived {localTime(f.updatedAt)}</span>}
              {canRestore && (
                <button type="button" class="plain small" aria-label={`Restore ${f.name}`} onClick={() => restore(f.name)}>
                  Restore
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
