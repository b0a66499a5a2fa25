/**
 * A rollback from a flag's history (docs/ui.md#a-flags-page): `POST /api/rollbacks` at once where
 * the environment it restores is open; in a protected one, through the `Review changes` dialog
 * (docs/ui.md#review-before-protected-changes), where `Request approval` makes a change request
 * setting that environment's fields the revision held (value, enabled, targeting) and `Apply now
 * without review` (a `flag:bypass` holder's) rolls back as before. Into an open environment, one
 * restoring shared fields a protected environment serves is reviewed as a save of them is
 * (docs/ui.md#shared-fields-reach-every-environment), through the same `writeFlag`.
 */

import { type FlagType, TYPE_CONSTRAINTS } from '../../domain/flag.ts'
import { api } from './api.ts'
import type { Entry } from './audit-diff.ts'
import { changeInWords } from './change-words.ts'
import { environmentNamed, protectedEnvironments, useEnvironments } from './environment-choice.ts'
import { CANCELLED, requestChanges, servedShared, writeFlag } from './flag-writes.ts'
import { needsReview, type ReviewResult, reviewChanges } from './review-dialog.tsx'

/** What a rollback came to: rolled back (the new revision), requested, refused, or cancelled. */
export type RollbackOutcome =
  | { rolledBack: number }
  | { requested: { id: string; state: string }; environment?: string; saved?: number }
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

/**
 * What `POST /api/rollbacks` writes for revision `was` (docs/api.md#audit): its type, description,
 * default value, value, constraints, enabled, variants, targeting and metadata, as a save's body.
 */
export function rollbackBody(was: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: was.type,
    description: was.description,
    defaultValue: was.defaultValue,
    ...restoredFields(was),
  }
  for (const field of TYPE_CONSTRAINTS[was.type as FlagType] ?? []) body[field] = was[field] ?? null
  for (const field of ['variants', 'metadata'] as const) body[field] = was[field] ?? null
  return body
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
  if (environment === undefined || !entry.after) return direct()
  const guarded = needsReview(environment)
  if (!guarded && protectedEnvironments().length === 0) return direct()
  // what the environment serves now, to say (and request) only what the rollback changes there
  const now = await api.GET('/api/flags/{flagName}', { params: { path: { flagName: name }, query: { environment } } })
  if (!now.data) return { error: now.error }
  const state = now.data as Record<string, unknown>
  if (!guarded) return restoreShared(state, entry, environment, direct)
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

/**
 * Rolls `state` (the flag as open `environment` serves it) back to `entry`'s revision: at once when
 * no shared field a protected environment serves moves, else reviewed as a save of them is, the
 * environment's own part saved directly and `Apply now without review` the rollback itself.
 */
async function restoreShared(
  state: Record<string, unknown>,
  entry: Entry,
  environment: string,
  direct: () => Promise<{ rolledBack: number } | { error: unknown }>,
): Promise<RollbackOutcome> {
  const body = rollbackBody(entry.after as Record<string, unknown>)
  const moves = (k: string) => JSON.stringify(body[k] ?? null) !== JSON.stringify(state[k] ?? null)
  if (!Object.keys(body).some((k) => moves(k) && servedShared(state, k, body[k]))) return direct()
  const applyAll = async () => {
    const done = await direct()
    return 'error' in done ? done : { saved: done.rolledBack }
  }
  const title = `Roll ${String(state.name)} back to revision ${entry.revision}`
  const written = await writeFlag(state, body, false, undefined, { environment, title, applyAll })
  if ('requested' in written) return written
  if ('saved' in written) return { rolledBack: written.saved }
  // a plain cancel says nothing; one after a refused request that left the direct part saved says so
  return written === CANCELLED ? { cancelled: true } : written
}
