/**
 * A rollback from a flag's history (docs/ui.md#a-flags-page): `POST /api/rollbacks` at once where
 * the environment it restores is open; in a protected one, through the `Review changes` dialog
 * (docs/ui.md#review-before-protected-changes), where `Request approval` makes a change request
 * setting that environment's fields the revision held (value, enabled, targeting) and `Apply now
 * without review` (a `flag:bypass` holder's) rolls back as before.
 */

import { api } from './api.ts'
import type { Entry } from './audit-diff.ts'
import { changeInWords } from './change-words.ts'
import { environmentNamed, useEnvironments } from './environment-choice.ts'
import { requestChanges } from './flag-writes.ts'
import { needsReview, type ReviewResult, reviewChanges } from './review-dialog.tsx'

/** What a rollback came to: rolled back (the new revision), requested, refused, or cancelled. */
export type RollbackOutcome =
  | { rolledBack: number }
  | { requested: { id: string; state: string } }
  | { error: unknown }
  | { cancelled: true }

/** The environment's fields revision `was` held, as a change request sets them (a rollback restores them so). */
export function restoredFields(was: Record<string, unknown>): Record<string, unknown> {
  return {
    valueExists: was.valueExists === true,
    ...(was.valueExists === true ? { value: was.value } : {}),
    enabled: was.enabled ?? true,
    targeting: was.targeting ?? null,
  }
}

/** The environment a rollback of `entry` restores: its own, or (a shared entry) `shown`, the one the page shows. */
export function rollbackTarget(entry: Pick<Entry, 'environment'>, shown: string | undefined): string | undefined {
  return entry.environment ?? shown
}

/** The default environment's name, for `rollbackTarget`. */
export function useDefaultEnvironment(): string | undefined {
  return useEnvironments().list.find((e) => e.default)?.name
}

/** Rolls flag `name` back to `entry`'s revision in `environment`, reviewed first where it is protected. */
export async function rollBack(name: string, entry: Entry, environment: string | undefined): Promise<RollbackOutcome> {
  const revision = entry.revision as number
  const direct = async (): Promise<{ rolledBack: number } | { error: unknown }> => {
    const { data, error } = await api.POST('/api/rollbacks', {
      params: environment && environmentNamed(environment) ? { query: { environment } } : {},
      body: { name, revision },
    })
    return data ? { rolledBack: (data as { revision: number }).revision } : { error }
  }
  if (environment === undefined || !needsReview(environment) || !entry.after) return direct()
  // what the environment serves now, to say (and request) only what the rollback changes there
  const now = await api.GET('/api/flags/{flagName}', { params: { path: { flagName: name }, query: { environment } } })
  if (!now.data) return { error: now.error }
  const state = now.data as Record<string, unknown>
  const restored = restoredFields(entry.after)
  const set = Object.fromEntries(
    Object.entries(restored).filter(([k, v]) => JSON.stringify(v ?? null) !== JSON.stringify(state[k] ?? (k === 'enabled' ? true : null))),
  )
  let done: RollbackOutcome = { cancelled: true }
  const reviewed: ReviewResult = await reviewChanges({
    environment,
    changes: [{ flag: name, lines: Object.keys(set).length > 0 ? changeInWords(state, set) : ['no change to what it serves'] }],
    title: `Roll ${name} back to revision ${revision}`,
    async run(choice) {
      if (choice.apply) {
        done = await direct()
        return 'error' in done ? done : { applied: true }
      }
      if (Object.keys(set).length === 0)
        return { error: { error: { code: 'NO_CHANGE', message: `${environment} already serves what revision ${revision} did` } } }
      const made = await requestChanges(environment, choice, [{ flag: name, set }])
      if ('requested' in made) done = made
      return made
    },
  })
  return 'cancelled' in reviewed ? reviewed : done
}
