/**
 * Applying a change request inside one transaction (docs/change-control.md#change-requests): every change
 * or none. Each flag must still be at the revision the request was made on, as its environment
 * sees it (a change confined to another environment does not count), and each change must still
 * be valid; otherwise nothing of it is written and the request becomes `failed` with the reason.
 */

import type { ChangeRequest } from '../domain/change-request.ts'
import type { FieldProblem } from '../domain/errors.ts'
import { type FlagRow, servedRevisionOf } from '../domain/flag-row.ts'
import { ownValue } from '../domain/own-property.ts'
import type { Tx } from '../storage/store.ts'
import { approvalsNeeded } from './change-request-deps.ts'
import { withEnvironmentFields } from './environment-state-write.ts'
import { archiveRefusal, withArchived } from './flag-archive.ts'

/** What applying did: `applied`, or `failed` with the reason. */
export type ApplyOutcome = { request: ChangeRequest; failureReason?: string }

/** Applies `request` (read from `tx`) at time `at`; the request row is updated either way. */
export function applyInTransaction(tx: Tx, request: ChangeRequest, at: string): ApplyOutcome {
  const rows: FlagRow[] = []
  const gone: string[] = []
  let failure: string | undefined
  // approvals are counted again: an environment protected or made stricter since asks for more (docs/change-control.md#approvals)
  const needed = approvalsNeeded(tx.read, request)
  if (request.approvals.length < needed)
    failure = `it needs ${needed} approval${needed === 1 ? '' : 's'} now and has ${request.approvals.length}`
  for (const [i, change] of failure === undefined ? request.changes.entries() : []) {
    const current = tx.read.flags.get(change.flag)
    if (current === undefined) {
      failure = `flag ${change.flag} no longer exists`
      break
    }
    // the same name on another flag (deleted, or renamed away, and made again) is not the flag it was made on
    if ((ownValue(request.baseFlagIds, change.flag) ?? current.id) !== current.id) {
      failure = `flag ${change.flag} was deleted and made again since the request was made`
      break
    }
    const base = ownValue(request.baseRevisions, change.flag)
    const now = servedRevisionOf(current, request.environment)
    if (base !== undefined && now !== base) {
      failure = `flag ${change.flag} changed in ${request.environment} since the request was made (revision ${base}, now ${now})`
      break
    }
    if (change.delete === true) {
      gone.push(current.id)
      continue
    }
    if (change.archive === true) {
      failure = archiveRefusal(tx.read, current)
      if (failure !== undefined) break
      rows.push(withArchived(current, true, at))
      continue
    }
    const made = withEnvironmentFields(tx.read, current, request.environment, change.set, at, `changes[${i}].set.`)
    if ('problems' in made) {
      failure = `the change of ${change.flag} is no longer valid: ${describe(made.problems)}`
      break
    }
    rows.push(made.row)
  }
  if (failure !== undefined) return failInTransaction(tx, request, at, failure)
  for (const row of rows) tx.put('flags', row)
  for (const id of gone) tx.delete('flags', id)
  const applied: ChangeRequest = { ...request, state: 'applied', appliedAt: at, updatedAt: at, revision: request.revision + 1 }
  tx.put('changeRequests', applied)
  return { request: applied }
}

/** Marks `request` failed at time `at` for `reason`; nothing of it is applied. */
export function failInTransaction(tx: Tx, request: ChangeRequest, at: string, reason: string): ApplyOutcome {
  const failed: ChangeRequest = { ...request, state: 'failed', failureReason: reason, updatedAt: at, revision: request.revision + 1 }
  tx.put('changeRequests', failed)
  return { request: failed, failureReason: reason }
}

function describe(problems: readonly FieldProblem[]): string {
  return problems
    .slice(0, 3)
    .map((p) => `${p.field}: ${p.reason}`)
    .join('; ')
}
