/**
 * Setting per-environment fields of one flag in one environment, inside a transaction: what a
 * change request applies (docs/change-control.md#change-requests) and what it is checked with when
 * made. The flag as that environment sees it is patched like a `PUT` would patch it, validated as a
 * whole against the newest segments, and stored with every other environment's state carried over.
 */

import type { FieldProblem } from '../domain/errors.ts'
import { type Flag, isArchived } from '../domain/flag.ts'
import { validateDefinition } from '../domain/flag-definition.ts'
import type { FlagRow } from '../domain/flag-row.ts'
import { mergeUpdate } from '../domain/flag-update.ts'
import type { Snapshot } from '../storage/store.ts'
import { flagView } from './environment-views.ts'
import { carryStates } from './flag-states.ts'

/** The row after setting `set` in environment `env` of `current` at time `at`, or the problems (fields prefixed with `prefix`). */
export function withEnvironmentFields(
  read: Snapshot,
  current: FlagRow,
  env: string,
  set: Record<string, unknown>,
  at: string,
  prefix: string,
): { row: FlagRow; before: Flag; after: Flag } | { problems: FieldProblem[] } {
  // an archived flag changes only by a restore (docs/api.md#archive)
  if (isArchived(current)) {
    const field = prefix.endsWith('set.') ? `${prefix.slice(0, -'set.'.length)}flag` : `${prefix}name`
    return { problems: [{ field, reason: `flag ${current.name} is archived; restore it first` }] }
  }
  const seen = flagView(current, env)
  const result = validateDefinition(mergeUpdate(seen, set), { ignoreFields: ['name'], segments: read.segmentRules() })
  if (!result.ok) return { problems: result.problems.map((p) => ({ field: `${prefix}${p.field}`, reason: p.reason })) }
  const written: Flag = {
    id: current.id,
    name: current.name,
    ...result.definition,
    createdAt: current.createdAt,
    updatedAt: at,
    revision: current.revision + 1,
  }
  try {
    const row = carryStates(read, written, current, env)
    return { row, before: seen, after: flagView(row, env) }
  } catch (err) {
    const problems = (err as { details?: { errors?: FieldProblem[] } }).details?.errors
    if (problems) return { problems: problems.map((p) => ({ field: `${prefix}${p.field}`, reason: p.reason })) }
    throw err
  }
}
