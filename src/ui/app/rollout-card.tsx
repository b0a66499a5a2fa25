/**
 * A flag's rollout and pending requests (docs/ui.md#change-control): the change requests waiting
 * for it in the chosen environment (open, approved, scheduled); its progressive rollout as a
 * timeline of the percentage (where it stands now, its milestones), what its guard sees
 * (guard-reading.tsx); and a form that starts, replaces or ends one with its guard
 * (guard-editor.tsx), saved or requested as the environment wants (flag-writes.ts).
 */

import { useEffect, useState } from 'preact/hooks'
import { allVariants, type FlagDefinition } from '../../domain/flag.ts'
import { type Rollout, rolloutAt } from '../../domain/rollout.ts'
import { api } from './api.ts'
import { current } from './environment-choice.ts'
import { type WriteOutcome, writtenInWords } from './flag-writes.ts'
import { draftOfGuard, guardOfDraft } from './guard-draft.ts'
import { GuardEditor } from './guard-editor.tsx'
import { GuardReading } from './guard-reading.tsx'
import { localTime } from './local-time.ts'
import { done, NoticeLine, useOutcome } from './notice.tsx'
import { haltInWords, haltOf, rolloutNow } from './rollout-words.ts'
import { link } from './router.ts'

type Pending = { id: string; title: string; state: string; scheduledAt: string | null; environment: string }

/** The percentage at a few moments of the window, for the timeline. */
function milestones(r: Rollout): { at: string; percent: number }[] {
  const start = Date.parse(r.start)
  const end = Date.parse(r.end)
  return [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const ms = Math.round(start + (end - start) * f)
    return { at: new Date(ms).toISOString(), percent: rolloutAt(r, Math.floor(ms / 1000)).percent }
  })
}

const local = (iso: string) => iso.slice(0, 16)

export function RolloutCard({
  flag,
  canWrite,
  viaRequest,
  write,
}: {
  flag: Record<string, unknown>
  canWrite: boolean
  viaRequest: boolean
  write: (body: Record<string, unknown>) => Promise<WriteOutcome>
}) {
  const name = String(flag.name)
  const rollout = flag.rollout as Rollout | undefined
  const variants = Object.keys(allVariants(flag as unknown as FlagDefinition))
  const [pending, setPending] = useState<Pending[]>([])
  const { errors, setErrors, message, setMessage, refusedWith } = useOutcome()
  const [guard, setGuard] = useState(() => draftOfGuard(rollout?.guard))
  // a rollout its guard stopped says so, with the share it serves (docs/ui.md#guarded-rollouts)
  const stopped = rollout ? haltOf(rollout) : null
  const halt = rollout && stopped ? (stopped.at ? haltInWords(rollout.variant, stopped) : rolloutNow(rollout, Date.now())) : null
  const week = Date.now() + 7 * 86_400_000
  const [form, setForm] = useState({
    variant: rollout?.variant ?? variants[0] ?? '',
    start: local(rollout?.start ?? new Date().toISOString()),
    end: local(rollout?.end ?? new Date(week).toISOString()),
    fromPercent: String(rollout?.fromPercent ?? 5),
    toPercent: String(rollout?.toPercent ?? 100),
  })
  useEffect(() => {
    void api.GET('/api/change-requests', { params: { query: { flag: name } } }).then(({ data }) => {
      const env = current()
      const waiting = ((data ?? []) as Pending[]).filter(
        (r) => ['open', 'approved', 'scheduled'].includes(r.state) && (env === undefined || r.environment === env),
      )
      setPending(waiting)
    })
  }, [name, flag.revision])

  async function save(next: Record<string, unknown> | null) {
    setErrors({})
    const result = await write({ rollout: next })
    if ('error' in result) return refusedWith(result.error)
    setMessage(done(writtenInWords(result, (r) => `rollout saved as revision ${r}`)))
  }
  const now = rolloutAt(
    rollout ?? ({ start: '1970-01-01T00:00:00Z', end: '1970-01-01T00:00:01Z', fromPercent: 0, toPercent: 0 } as Rollout),
    Math.floor(Date.now() / 1000),
  )
  const shown = stopped ? stopped.percent : now.percent
  const set = (key: keyof typeof form) => (e: { currentTarget: { value: string } }) => setForm({ ...form, [key]: e.currentTarget.value })
  return (
    <section class="card" aria-labelledby="rollout-title">
      <h2 id="rollout-title">Rollout and pending changes</h2>
      {pending.length > 0 && (
        <ul class="pending">
          {pending.map((r) => (
            <li key={r.id}>
              <a {...link(`change-requests/${encodeURIComponent(r.id)}`)}>{r.title}</a> <span class="chip">{r.state}</span>
              {r.scheduledAt ? ` at ${localTime(r.scheduledAt)}` : ''}
            </li>
          ))}
        </ul>
      )}
      {rollout ? (
        <>
          {halt ? (
            <p class="guard-halt">{halt}.</p>
          ) : (
            <p>
              {rolloutNow(rollout, Date.now())} (step {now.step} of {now.steps}; from {rollout.fromPercent} % on {localTime(rollout.start)}
              {rollout.by ? `, sticky by ${rollout.by}` : ', sticky by targetingKey'}).
            </p>
          )}
          <div class="rollout-bar" role="img" aria-label={`rollout at ${shown} %`}>
            <span style={{ width: `${shown}%` }} />
          </div>
          <ol class="timeline" aria-label="Rollout timeline">
            {milestones(rollout).map((m) => (
              <li key={m.at}>
                <time dateTime={m.at} title={m.at}>
                  {localTime(m.at)}
                </time>
                <strong>{m.percent} %</strong>
              </li>
            ))}
          </ol>
          {rollout.guard && (
            <GuardReading
              haltShown={halt !== null}
              name={name}
              revision={flag.revision}
              variant={rollout.variant}
              guard={rollout.guard}
              since={rollout.writtenAt ?? rollout.start}
            />
          )}
        </>
      ) : (
        <p class="meta">No rollout in this environment.</p>
      )}
      {canWrite && variants.length > 0 && (
        <form
          class="rollout-form"
          onSubmit={(e) => {
            e.preventDefault()
            void save({
              variant: form.variant,
              start: new Date(form.start).toISOString(),
              end: new Date(form.end).toISOString(),
              fromPercent: Number(form.fromPercent),
              toPercent: Number(form.toPercent),
              ...(guardOfDraft(guard) ? { guard: guardOfDraft(guard) } : {}),
            })
          }}
        >
          <div class="field">
            <label for="ro-variant">Variant rolled out</label>
            <select id="ro-variant" value={form.variant} onChange={set('variant')}>
              {variants.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="ro-start">From (time)</label>
            <input id="ro-start" type="datetime-local" value={form.start} onInput={set('start')} />
          </div>
          <div class="field">
            <label for="ro-from">From (%)</label>
            <input id="ro-from" type="number" min="0" max="100" step="any" value={form.fromPercent} onInput={set('fromPercent')} />
          </div>
          <div class="field">
            <label for="ro-end">To (time)</label>
            <input id="ro-end" type="datetime-local" value={form.end} onInput={set('end')} />
          </div>
          <div class="field">
            <label for="ro-to">To (%)</label>
            <input id="ro-to" type="number" min="0" max="100" step="any" value={form.toPercent} onInput={set('toPercent')} />
          </div>
          <GuardEditor draft={guard} onChange={setGuard} errors={errors} />
          <div class="actions">
            <button type="submit">{viaRequest ? 'Request rollout' : rollout ? 'Save rollout' : 'Start rollout'}</button>
            {rollout && (
              <button type="button" class="plain" onClick={() => save(null)}>
                {viaRequest ? 'Request its end' : 'End rollout'}
              </button>
            )}
          </div>
        </form>
      )}
      <NoticeLine notice={message} />
    </section>
  )
}
