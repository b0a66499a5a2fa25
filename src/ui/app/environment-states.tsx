/**
 * A flag in every environment side by side (docs/ui.md#environments): value, enabled, rule in words,
 * rollout and A/B share per environment the person may read, the chosen one marked; "Copy from <env>" copies
 * another environment's state of this flag into the chosen one (a promotion of this one flag; the
 * states stand side by side above the button, so what it changes is in view); into a protected
 * environment it is reviewed first (docs/ui.md#review-before-protected-changes).
 */

import { ownValue } from '../../domain/own-property.ts'
import { api } from './api.ts'
import { holdsIn, useEnvironments } from './environment-choice.ts'
import { EnvironmentSwatch } from './environment-colour.tsx'
import type { FlagState } from './flag-states.ts'
import { done, NoticeLine, refused, useOutcome } from './notice.tsx'
import type { Difference } from './promotion-choice.ts'
import { reviewPromotion } from './promotion-review.ts'
import { needsReview } from './review-dialog.tsx'
import { rolloutNow } from './rollout-words.ts'
import { targetingInWords } from './rule-words.ts'

const shownValue = (s: FlagState) => (s.valueExists ? JSON.stringify(s.value) : 'no value (default)')
/** The rule in words; without one, what decides instead (a rollout, or the value for everyone). */
const ruleOf = (s: FlagState) =>
  s.targeting ? targetingInWords(s.targeting).join('; ') : s.rollout ? 'no rule: the rollout decides, then the value' : 'no rule: the value'
/** Where the rollout stands now, or "none". */
const rolloutOf = (s: FlagState) => (s.rollout ? rolloutNow(s.rollout, Date.now()) : 'none')

export function EnvironmentStates({
  name,
  states,
  permissions,
  onCopied,
}: {
  name: string
  /** The flag's state per environment (flag-states.ts), `null` until read. */
  states: Record<string, FlagState> | null
  permissions: readonly string[]
  onCopied: () => void
}) {
  const { list, current } = useEnvironments()
  const { message, setMessage } = useOutcome()
  // an environment's own entry only: one named like a built-in property (toString) is a name, not a method
  const shown = list.filter((e) => ownValue(states ?? undefined, e.name) !== undefined)
  if (shown.length < 2 || !states || current === undefined) return null
  const canCopy = holdsIn(permissions, 'flag:write', current)

  async function copyNow(from: string) {
    const { data, error } = await api.POST('/api/environments/{name}/promote', {
      params: { path: { name: current as string } },
      body: { from, flags: [name] },
    })
    if (!data) return { error }
    const copied = (data as { changes: unknown[] }).changes.length
    setMessage(done(copied === 0 ? `${current} already matches ${from}` : `copied ${from}'s state into ${current}`))
    onCopied()
    return { applied: true as const }
  }
  async function copyFrom(from: string) {
    const to = current as string
    if (!needsReview(to)) {
      const result = await copyNow(from)
      return 'error' in result ? setMessage(refused(result.error)) : undefined
    }
    // the fields that differ, as the service compares them, are what the review shows and requests
    const { data, error } = await api.GET('/api/environments/compare', { params: { query: { from, to, prefix: name } } })
    if (!data) return setMessage(refused(error))
    const difference = (data as Difference[]).find((d) => d.name === name)
    if (!difference) return setMessage(done(`${to} already matches ${from}`))
    const result = await reviewPromotion(from, to, [difference], () => copyNow(from), `Copy ${name} from ${from} into ${to}`)
    if ('requested' in result) setMessage(done(`change request made (${result.requested.state}) to copy ${from}'s state into ${to}`))
  }

  const rows: [string, (s: FlagState) => string][] = [
    ['Value', shownValue],
    ['Enabled', (s) => (s.enabled === false ? 'disabled' : 'enabled')],
    ['Rule', ruleOf],
    ['Rollout', rolloutOf],
    ['A/B share', (s) => (s.chancePercentB === undefined ? '–' : `${s.chancePercentB} % B`)],
  ]
  return (
    <section class="card" aria-labelledby="environments-title">
      <h2 id="environments-title">Environments</h2>
      {/* on a phone the table scrolls inside its card, never the page (docs/ui.md#a-flags-page) */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls must take the focus, or a keyboard cannot scroll it */}
      <section class="env-states-scroll" aria-label="Each environment's state" tabIndex={0}>
        <table class="environments">
          <thead>
            <tr>
              <th scope="col">State</th>
              {shown.map((e) => (
                <th key={e.name} scope="col" aria-current={e.name === current ? 'true' : undefined}>
                  <EnvironmentSwatch name={e.name} />
                  {e.name}
                  {e.name === current ? ' (shown below)' : ''}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(([label, show]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                {shown.map((e) => (
                  <td key={e.name}>{show(ownValue(states, e.name) as FlagState)}</td>
                ))}
              </tr>
            ))}
            {canCopy && (
              <tr>
                <th scope="row">
                  <span class="sr-only">Copy</span>
                </th>
                {shown.map((e) => (
                  <td key={e.name}>
                    {e.name !== current && (
                      <button type="button" class="plain" onClick={() => copyFrom(e.name)}>
                        Copy from {e.name}
                      </button>
                    )}
                  </td>
                ))}
              </tr>
            )}
          </tbody>
        </table>
      </section>
      <NoticeLine notice={message} />
    </section>
  )
}
