/**
 * The Change requests page (docs/ui.md#change-requests): one table, in tabs `Needs my review`,
 * `Open`, `Scheduled` and `Closed`, each with its count; the tab is kept in the address (`?tab=`).
 * A request's title opens its own page (change-request-page.tsx).
 */

import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api } from './api.ts'
import { firstTab, inTab, type Request, TABS, type TabKey, tabCounts, tabOf, type Viewer } from './change-request-model.ts'
import { useEnvironments } from './environment-choice.ts'
import { EnvironmentSwatch } from './environment-colour.tsx'
import { listenForChanges } from './live.ts'
import { localTime } from './local-time.ts'
import { NoticeLine, refused, useOutcome } from './notice.tsx'
import { link, replaceSearch, useSearch } from './router.ts'

/** The list of every request the person may read, newest first, and the tabs over it. */
export function ChangeRequestsPage({ me, permissions }: { me: string; permissions: readonly string[] }) {
  const viewer: Viewer = { id: me, permissions }
  const [requests, setRequests] = useState<Request[] | null>(null)
  const { message, setMessage } = useOutcome()
  const asked = tabOf(useSearch())
  const load = async () => {
    const { data, error } = await api.GET('/api/change-requests', { params: { query: {} } })
    if (data) setRequests(data as Request[])
    else setMessage(refused(error))
  }
  useEffect(() => {
    void load()
    return listenForChanges((type) => type.startsWith('flag.') && void load())
  }, [])
  const counts = tabCounts(requests ?? [], viewer)
  // no tab in the address: the first load picks one and writes it there, so it stays put while requests
  // move; before the browser paints, so the table never shows under an address that does not name its tab
  useLayoutEffect(() => {
    if (requests !== null && asked === null) replaceSearch(`tab=${firstTab(counts)}`)
  }, [requests === null, asked])
  const tab = asked ?? (requests === null ? null : firstTab(counts))
  return (
    <section class="page change-requests">
      <h1>Change requests</h1>
      <NoticeLine notice={message} />
      {tab && <Tabs tab={tab} counts={counts} />}
      {tab && requests && (
        <div role="tabpanel" id="requests-panel" aria-labelledby={`tab-${tab}`} class="requests-panel">
          <RequestTable requests={requests.filter((r) => inTab(r, tab, viewer))} tab={tab} />
        </div>
      )}
    </section>
  )
}

/** The tab strip: one tab per view named by its stable name, its count beside it; arrow keys move between them. */
function Tabs({ tab, counts }: { tab: TabKey; counts: Record<TabKey, number> }) {
  const strip = useRef<HTMLDivElement>(null)
  const choose = (key: TabKey, focus = false) => {
    replaceSearch(`tab=${key}`)
    if (focus) requestAnimationFrame(() => strip.current?.querySelector<HTMLElement>(`#tab-${key}`)?.focus())
  }
  const onKey = (e: KeyboardEvent) => {
    const at = TABS.findIndex((t) => t.key === tab)
    const to = e.key === 'ArrowRight' ? at + 1 : e.key === 'ArrowLeft' ? at - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? -1 : null
    if (to === null) return
    e.preventDefault()
    const next = TABS.at(to % TABS.length)
    if (next) choose(next.key, true)
  }
  return (
    <div class="request-tabs" role="tablist" aria-label="Change requests by state" ref={strip} onKeyDown={onKey}>
      {TABS.map((t) => (
        <button
          key={t.key}
          type="button"
          role="tab"
          id={`tab-${t.key}`}
          aria-selected={t.key === tab}
          aria-controls="requests-panel"
          tabIndex={t.key === tab ? 0 : -1}
          // the stable name alone (docs/ui.md#change-requests); the count, in parentheses, is its description
          aria-label={t.label}
          aria-describedby={`tab-count-${t.key}`}
          onClick={() => choose(t.key)}
        >
          {t.label}{' '}
          <span class="count" id={`tab-count-${t.key}`}>
            ({counts[t.key]})
          </span>
        </button>
      ))}
    </div>
  )
}

const EMPTY: Record<TabKey, string> = {
  review: 'Nothing waits for your review.',
  open: 'No open requests.',
  scheduled: 'No scheduled requests.',
  closed: 'No closed requests yet.',
}

/** The requests of one tab as a table: title (a link to its page), flags, environment, author, state, approvals, last update. */
function RequestTable({ requests, tab }: { requests: readonly Request[]; tab: TabKey }) {
  const environments = useEnvironments()
  if (requests.length === 0) return <p class="meta">{EMPTY[tab]}</p>
  const required = (env: string) => environments.list.find((e) => e.name === env)?.requiredApprovals ?? 0
  return (
    <table class="request-table">
      <thead>
        <tr>
          <th scope="col" class="col-title">
            Title
          </th>
          <th scope="col" class="opt">
            Flags
          </th>
          <th scope="col">Environment</th>
          <th scope="col" class="opt">
            Author
          </th>
          <th scope="col">State</th>
          <th scope="col">Approvals</th>
          <th scope="col" class="opt">
            Updated
          </th>
        </tr>
      </thead>
      <tbody>
        {requests.map((r) => (
          <tr key={r.id} data-request={r.id}>
            <th scope="row" class="title">
              <a {...link(`change-requests/${encodeURIComponent(r.id)}`)}>{r.title}</a>
              {r.scheduledAt && <span class="desc">at {localTime(r.scheduledAt)}</span>}
            </th>
            <td class="opt flags">{r.changes.map((c) => c.flag).join(', ')}</td>
            <td class="environment">
              <EnvironmentSwatch name={r.environment} /> {r.environment}
            </td>
            <td class="opt">{r.author.name}</td>
            <td>
              <span class={`chip state-${r.state}`}>{r.state}</span>
            </td>
            <td class="approvals" title={`${r.approvals.length} of ${required(r.environment)} approvals needed`}>
              {r.approvals.length}/{required(r.environment)}
            </td>
            <td class="opt updated">
              <time dateTime={r.updatedAt}>{localTime(r.updatedAt)}</time>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
