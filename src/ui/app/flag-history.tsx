/**
 * A flag's history (docs/ui.md#a-flags-page): every change with when, who, how and its revision,
 * where it applied ("in production" for one environment's state, "every environment" for shared
 * fields and the flag's creation), what changed in words, and `Roll back to revision N`.
 */

import { describeChange, type Entry } from './audit-diff.ts'
import { ConfirmButton } from './confirm-button.tsx'
import { EnvironmentSwatch } from './environment-colour.tsx'
import { localTime } from './local-time.ts'

/** Where an entry applied, as its chip says it. */
export const whereOf = (e: Pick<Entry, 'environment'>) => (e.environment ? `in ${e.environment}` : 'every environment')

export function FlagHistory({
  history,
  revision,
  canWrite,
  onRollback,
}: {
  history: Entry[]
  /** The flag's revision now: its own entry offers no rollback. */
  revision: unknown
  canWrite: boolean
  onRollback: (entry: Entry) => void
}) {
  return (
    <section class="card" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <ol class="history">
        {history.map((e) => (
          <li key={e.id}>
            <span>
              {localTime(e.at)} · {e.actor.name} ({e.source}) · revision {e.revision} ·{' '}
              <span class={e.environment ? 'chip env' : 'chip'}>
                {e.environment && <EnvironmentSwatch name={e.environment} />}
                {whereOf(e)}
              </span>
            </span>
            <span class="diff">{describeChange(e)}</span>
            {canWrite && e.after && e.revision !== revision && (
              <ConfirmButton
                quiet
                label={`Roll back to revision ${e.revision}`}
                confirm={`Restore revision ${e.revision} now`}
                onConfirm={() => onRollback(e)}
              />
            )}
          </li>
        ))}
      </ol>
    </section>
  )
}
