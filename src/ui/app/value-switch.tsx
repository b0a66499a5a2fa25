/**
 * A flag's value as the flag list shows it (docs/ui.md): a BOOLEAN's value is a switch
 * (`role="switch"`) named after the flag (and its environment, in another environment's column),
 * toggled in one click when the person may write there (in a protected environment, through the
 * `Review changes` dialog: docs/ui.md#review-before-protected-changes); any other value is shown as JSON.
 */

import { api, messageOf } from './api.ts'
import { changeInWords } from './change-words.ts'
import { current } from './environment-choice.ts'
import { requestChanges } from './flag-writes.ts'
import { needsReview, reviewChanges } from './review-dialog.tsx'
import { readTargeting } from './rule-model.ts'
import { percentText, shares } from './rule-words.ts'

/** What the list needs of a flag. */
export type ListedFlag = {
  name: string
  type: string
  value?: unknown
  defaultValue: unknown
  valueExists: boolean
  revision: number
  chancePercentB?: number
  description?: string
  enabled?: boolean
  targeting?: unknown
  updatedAt?: string
}
type Flag = ListedFlag

/** What an application gets: the value, or for an A/B test without one, the split it runs. */
export const shownValue = (f: Flag) =>
  f.type === 'AB-TEST' && !f.valueExists
    ? `split ${100 - (f.chancePercentB ?? 50)}/${f.chancePercentB ?? 50}`
    : JSON.stringify(effective(f))

const effective = (f: Flag) => (f.valueExists ? f.value : f.defaultValue)

/**
 * A BOOLEAN's value switch. Its value is what the flag serves when nothing else decides: with a rule
 * it is served only where the rule names no variant, and a disabled flag serves the application's own
 * default. So the switch says which applies (visibly, and in its description), rather than look like
 * the answer every user gets.
 */
function switchNote(flag: Pick<Flag, 'targeting' | 'enabled'>): { title: string; shown: string } | undefined {
  if (flag.enabled === false)
    return { title: 'disabled: applications get their own default; the value applies when enabled', shown: 'when enabled' }
  if (flag.targeting === undefined || flag.targeting === null) return undefined
  // a split alone places every context that has its key: the value reaches only those without it
  const model = readTargeting(flag.targeting)
  if (model?.split && model.rules.length === 0) {
    // what the split serves is what a reader asks first ("true to 20 %"): the cell says that, and
    // the description says where the switch's own value still reaches
    const key = model.split.by || 'targetingKey'
    const on = shares(model.split).find((s) => s.variant === 'true')?.percent ?? 0
    return {
      title: `a split serves true to ${percentText(on)} of contexts with a ${key}; this value reaches only contexts without one`,
      shown: `split: true ${percentText(on)}`,
    }
  }
  return { title: 'the value where the rule names no variant: the rule decides first', shown: 'if no rule matches' }
}

export function Switch({
  flag,
  canWrite,
  onError,
  onWritten,
  environment,
}: {
  flag: Flag
  canWrite: boolean
  onError: (m: string) => void
  /** Told what a write did in words ("checkout/x in staging: on"), for a status line (docs/ui.md#common-tasks). */
  onWritten?: ((words: string) => void) | undefined
  /** Another environment than the chosen one: its column's switch, named with it. */
  environment?: string | undefined
}) {
  const on = effective(flag) === true
  const note = switchNote(flag)
  const noteId = `switch-note-${flag.name}${environment ? `@${environment}` : ''}`
  async function put() {
    return api.PUT('/api/flags/{flagName}', {
      params: {
        path: { flagName: flag.name },
        header: { 'If-Match': `"${flag.revision}"` },
        ...(environment ? { query: { environment } } : {}),
      },
      body: { value: !on },
    })
  }
  async function toggle() {
    const env = environment ?? current()
    const where = env === undefined ? flag.name : `${flag.name} in ${env}`
    if (env === undefined || !needsReview(env)) {
      const { error } = await put()
      if (error) onError(messageOf(error))
      else onWritten?.(`${where}: ${on ? 'off' : 'on'}`)
      return
    }
    // the dialog shows a refusal itself, and a cancelled review changes nothing
    let revision = flag.revision
    const reviewed = await reviewChanges({
      environment: env,
      changes: [{ flag: flag.name, lines: changeInWords({ value: on }, { value: !on }) }],
      title: `Change ${flag.name}: value`,
      async run(choice) {
        if (!choice.apply) return requestChanges(env, choice, [{ flag: flag.name, set: { value: !on } }])
        const { data, error } = await put()
        if (error) return { error }
        revision = (data as { revision: number }).revision
        return { applied: true }
      },
    })
    // skipping the review is said, with the revision it made (docs/ui.md#review-before-protected-changes)
    if ('applied' in reviewed)
      onWritten?.(`${where}: ${on ? 'off' : 'on'}, applied without review (recorded as a bypass) as revision ${revision}`)
    else if ('requested' in reviewed) onWritten?.(`${where}: change request made (${reviewed.requested.state})`)
  }
  return (
    <span class="value-switch">
      {note && (
        <span class="switch-note" id={noteId}>
          {note.shown}
        </span>
      )}
      <button
        type="button"
        role="switch"
        aria-checked={on}
        aria-label={environment ? `${flag.name} in ${environment}` : flag.name}
        aria-describedby={note ? noteId : undefined}
        title={note?.title}
        class={on ? 'switch on' : 'switch'}
        disabled={!canWrite}
        onClick={toggle}
      />
    </span>
  )
}

/** One environment's cell of a flag's row: its name, whether it is off, and its switch or value. */
export function EnvironmentCell({
  flag,
  environment,
  chosen,
  canWrite,
  onError,
}: {
  flag: Flag | undefined
  environment: string
  chosen: boolean
  canWrite: boolean
  onError: (m: string) => void
}) {
  return (
    <span class={chosen ? 'env-cell chosen' : 'env-cell'} data-environment={environment}>
      <span class="env-name">{environment}</span>
      {flag === undefined ? (
        <span class="meta">–</span>
      ) : flag.type === 'BOOLEAN' ? (
        <Switch flag={flag} canWrite={canWrite} onError={onError} environment={chosen ? undefined : environment} />
      ) : (
        <code class="value">{shownValue(flag)}</code>
      )}
      {flag?.enabled === false && <span class="chip off">off</span>}
    </span>
  )
}
