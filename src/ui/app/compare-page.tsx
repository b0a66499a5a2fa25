/**
 * Compare two environments and promote (docs/ui.md#environments): pick `From` and `To` (and a name
 * prefix), see every flag whose state differs field by field, tick the flags to carry over, and
 * `Promote` them in one durable commit. The differences are on screen before the button is; the
 * answer lists what changed, and the list is shown again, now without them. Into a protected
 * environment a promotion is reviewed first, and a flag whose promotion would end a rollout running
 * there starts unticked (docs/ui.md#review-before-protected-changes).
 */

import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from './api.ts'
import { compareDirection } from './compare-direction.ts'
import { countOf } from './count-words.ts'
import { holdsIn, useEnvironments } from './environment-choice.ts'
import { EnvironmentSwatch } from './environment-colour.tsx'
import { done, NoticeLine, refused, useOutcome } from './notice.tsx'
import { type Difference, endsRunningRollout, promotedByDefault, targetAhead } from './promotion-choice.ts'
import { reviewPromotion } from './promotion-review.ts'
import { needsReview } from './review-dialog.tsx'
import { rolloutInWords } from './rollout-words.ts'
import { targetingInWords } from './rule-words.ts'

const shown = (v: unknown) => (v === null || v === undefined ? '–' : JSON.stringify(v))

/** A field's value as a person reads it: rules and rollouts in words, as `Review changes` says them (docs/ui.md#environments). */
function inWords(field: string, v: unknown): string {
  if (field === 'targeting') return v === null || v === undefined ? 'no rule' : targetingInWords(v).join('; ')
  if (field === 'rollout') return rolloutInWords(v)
  return shown(v)
}

export function ComparePage({ permissions }: { permissions: readonly string[] }) {
  const { list, current } = useEnvironments()
  const readable = list.filter((e) => holdsIn(permissions, 'flag:read', e.name))
  const opening = compareDirection(readable, current)
  const [from, setFrom] = useState(opening.from)
  const [to, setTo] = useState(opening.to)
  const [prefix, setPrefix] = useState('')
  const [differences, setDifferences] = useState<Difference[] | null>(null)
  // rules and rollouts in words; their JSON behind a toggle, as a request's page has it
  const [json, setJson] = useState(false)
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set())
  const { message, setMessage } = useOutcome()

  // only the newest comparison's answer is shown: one asked before a choice changed may come back after
  const asked = useRef(0)
  async function compare() {
    if (!from || !to) return
    const mine = ++asked.current
    const { data, error } = await api.GET('/api/environments/compare', { params: { query: { from, to, prefix } } })
    if (mine !== asked.current) return
    if (!data) return setMessage(refused(error))
    setDifferences(data as Difference[])
    setChosen(promotedByDefault(data as Difference[], Date.now()))
  }
  useEffect(() => {
    setDifferences(null)
    void compare()
  }, [from, to])

  async function promoteNow() {
    const { data, error } = await api.POST('/api/environments/{name}/promote', {
      params: { path: { name: to } },
      body: { from, flags: [...chosen] },
    })
    if (!data) return { error }
    const n = (data as { changes: unknown[] }).changes.length
    setMessage(done(`promoted ${countOf(n, 'flag')} from ${from} to ${to}`))
    return { applied: true as const }
  }
  async function promote() {
    if (!needsReview(to)) {
      const result = await promoteNow()
      if ('error' in result) return setMessage(refused(result.error))
      return compare()
    }
    const picked = (differences ?? []).filter((d) => chosen.has(d.name))
    const result = await reviewPromotion(from, to, picked, promoteNow)
    if ('requested' in result)
      setMessage(done(`change request made (${result.requested.state}) to promote ${countOf(picked.length, 'flag')}`))
    if (!('cancelled' in result)) await compare()
  }
  const toggle = (name: string, on: boolean) => {
    const next = new Set(chosen)
    if (on) next.add(name)
    else next.delete(name)
    setChosen(next)
  }
  const options = readable.map((e) => (
    <option key={e.name} value={e.name}>
      {e.name}
    </option>
  ))
  return (
    <section class="page compare">
      <h1>Compare environments</h1>
      <form
        class="list-filters"
        onSubmit={(e) => {
          e.preventDefault()
          void compare()
        }}
      >
        <div class="field">
          <label for="compare-from">From</label>
          <select id="compare-from" value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
            {options}
          </select>
        </div>
        <div class="field">
          <label for="compare-to">To</label>
          <select id="compare-to" value={to} onChange={(e) => setTo(e.currentTarget.value)}>
            {options}
          </select>
        </div>
        <div class="field">
          <label for="compare-prefix">Names starting with</label>
          <input id="compare-prefix" value={prefix} onInput={(e) => setPrefix(e.currentTarget.value)} placeholder="checkout/" />
        </div>
        <button type="submit">Show differences</button>
      </form>
      <NoticeLine notice={message} />
      {from === to && <p>Pick two different environments.</p>}
      {differences !== null && from !== to && differences.length === 0 && (
        <p>
          {to} serves what {from} serves{prefix ? ` for flags under ${prefix}` : ''}: nothing to promote.
        </p>
      )}
      {differences !== null && from !== to && differences.length > 0 && (
        <>
          <div class="table-scroll">
            <table class="differences">
              <caption>
                {countOf(differences.length, 'flag differs', 'flags differ')} between {from} and {to}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Promote</th>
                  <th scope="col">Field</th>
                  <th scope="col">
                    <EnvironmentSwatch name={from} />
                    In {from}
                  </th>
                  <th scope="col">
                    <EnvironmentSwatch name={to} />
                    In {to}
                  </th>
                </tr>
              </thead>
              <tbody>
                {/* a flag's row (its box and name), then one row per field that differs: four columns fit a phone */}
                {differences.flatMap((d, n) => [
                  <tr key={d.name} class="flag-row" data-flag={d.name}>
                    <td>
                      <input
                        type="checkbox"
                        id={`promote-${n}`}
                        checked={chosen.has(d.name)}
                        onChange={(e) => toggle(d.name, e.currentTarget.checked)}
                      />
                      <label class="sr-only" for={`promote-${n}`}>
                        Promote {d.name}
                      </label>
                    </td>
                    <th scope="row" colSpan={3} class="flag-name">
                      {d.name}
                      {endsRunningRollout(d, Date.now()) && <span class="meta"> ends the rollout running in {to}</span>}
                      {targetAhead(d) && (
                        <span class="meta">
                          {' '}
                          changed in {to} after {from} (revision {d.revisions?.to}): promoting undoes that change
                        </span>
                      )}
                    </th>
                  </tr>,
                  ...Object.entries(d.fields).map(([field, v]) => (
                    <tr key={`${d.name} ${field}`} data-flag={d.name}>
                      <td />
                      <td>{field}</td>
                      <td>{json ? <code>{shown(v.from)}</code> : inWords(field, v.from)}</td>
                      <td>{json ? <code>{shown(v.to)}</code> : inWords(field, v.to)}</td>
                    </tr>
                  )),
                ])}
              </tbody>
            </table>
          </div>
          <button type="button" class="plain" aria-pressed={json} onClick={() => setJson(!json)}>
            Show JSON
          </button>
          {holdsIn(permissions, 'flag:write', to) && (
            <div class="actions">
              <button type="button" onClick={promote} disabled={chosen.size === 0}>
                Promote
              </button>
              <span class="meta">
                copies {chosen.size === 1 ? "1 flag's" : `${chosen.size} flags'`} state from {from} into {to}
              </span>
            </div>
          )}
        </>
      )}
    </section>
  )
}
