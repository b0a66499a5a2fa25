/**
 * Compare and promote (docs/environments.md#compare-and-promote): the flags whose state differs
 * between two environments, field by field, and copying the chosen flags' states from one
 * environment into another in one durable commit, each promoted flag at a new revision, after a
 * dry run that answers the same and changes nothing. Reading needs `flag:read` in both, promoting
 * `flag:write` in the target.
 */

import { canSeeFlag, requirePermissionSomewhere } from '../domain/access-policy.ts'
import type { Clock } from '../domain/clock.ts'
import { type FlagState, STATE_FIELDS } from '../domain/environment.ts'
import { InvalidError, NotFoundError, ValidationFailedError } from '../domain/errors.ts'
import { isArchived } from '../domain/flag.ts'
import { type FlagRow, servedRevisionOf, stampServed, stateIn, withStateIn } from '../domain/flag-row.ts'
import { isJsonObject } from '../domain/json-object.ts'
import type { Caller } from '../domain/principal.ts'
import { writtenRollout } from '../domain/rollout-status.ts'
import { unknownFieldReason } from '../domain/spelling-suggestion.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import { commitMeta } from './commit-meta.ts'
import { type ApplyError, applyRefusal } from './dry-run-tx.ts'
import { requireIn } from './environment-access.ts'
import { archivedConflict } from './flag-archive.ts'

/** A flag whose state differs between two environments: each differing field with its two values. */
export interface FlagDifference {
  name: string
  fields: Record<string, { from: unknown; to: unknown }>
  /**
   * The revision at which each environment last saw the flag change (docs/environments.md#revisions):
   * a target that changed after the source (a hotfix made there) is ahead, and promoting would undo it.
   */
  revisions: { from: number; to: number }
}

/** What a promotion did (or would do, as a dry run). */
export interface Promotion {
  dryRun: boolean
  changes: { name: string; revision: number; diff: Record<string, { before: unknown; after: unknown }> }[]
  unchanged: number
  /** A dry run that applying would see refused: the error it would answer (docs/change-control.md#dry-runs). */
  applyError?: ApplyError
}

/** The compare and promote use cases. */
export interface PromotionService {
  /** The flags whose state differs between two environments, in name order (`prefix` narrows them). */
  compare(caller: Caller, from: string, to: string, prefix?: string): FlagDifference[]
  /**
   * Copies the state of the chosen flags (`flags`, else those under `prefix`, else all) from `from`
   * to `to` in one durable commit; `dryRun` shows the same answer and changes nothing.
   */
  promote(caller: Caller, to: string, input: unknown): Promise<Promotion>
}

/**
 * The state fields whose values differ (compared as JSON); a rollout by its written fields, since
 * what the server keeps on it stays with each environment's own (docs/guarded-rollouts.md#status-and-percent).
 */
function differences(a: FlagState, b: FlagState): Record<string, { a: unknown; b: unknown }> {
  const out: Record<string, { a: unknown; b: unknown }> = {}
  const shown = (s: FlagState, field: (typeof STATE_FIELDS)[number]) =>
    field === 'rollout' && s.rollout !== undefined ? writtenRollout(s.rollout) : s[field]
  for (const field of STATE_FIELDS) {
    const [x, y] = [shown(a, field), shown(b, field)]
    if (JSON.stringify(x) !== JSON.stringify(y)) out[field] = { a: x ?? null, b: y ?? null }
  }
  return out
}

/** Checks the body of a promotion; every problem at once. */
function parsePromotion(input: unknown): { from: string; flags?: string[]; prefix?: string; dryRun: boolean } {
  if (!isJsonObject(input)) throw new InvalidError('the body must be a JSON object', 'body', 'must be a JSON object')
  const problems: { field: string; reason: string }[] = []
  const known = ['from', 'flags', 'prefix', 'dryRun']
  for (const key of Object.keys(input)) if (!known.includes(key)) problems.push({ field: key, reason: unknownFieldReason(key, known) })
  const { from, flags, prefix, dryRun } = input
  if (typeof from !== 'string') problems.push({ field: 'from', reason: from === undefined ? 'required' : 'must be an environment name' })
  if (flags !== undefined && !(Array.isArray(flags) && flags.every((f) => typeof f === 'string')))
    problems.push({ field: 'flags', reason: 'must be an array of flag names' })
  if (prefix !== undefined && typeof prefix !== 'string') problems.push({ field: 'prefix', reason: 'must be a string' })
  if (dryRun !== undefined && typeof dryRun !== 'boolean') problems.push({ field: 'dryRun', reason: 'must be true or false' })
  if (problems.length > 0) throw new ValidationFailedError(problems)
  return {
    from: from as string,
    ...(flags !== undefined ? { flags: flags as string[] } : {}),
    ...(prefix !== undefined ? { prefix: prefix as string } : {}),
    dryRun: dryRun === true,
  }
}

/** Creates the use cases over `store`; `now` stamps promoted flags. */
export function createPromotionService(store: Store, now: Clock): PromotionService {
  return {
    compare(caller, from, to, prefix = '') {
      requirePermissionSomewhere(caller.principal, 'flag:read')
      const snapshot = store.committed()
      for (const env of [from, to])
        if (!snapshot.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
      for (const env of [from, to]) requireIn(caller.principal, 'flag:read', env)
      const out: FlagDifference[] = []
      for (const name of [...snapshot.flags.keys()].sort()) {
        const row = snapshot.flags.get(name) as FlagRow
        // archived flags serve nowhere: no difference to show (docs/api.md#archive)
        if (!name.startsWith(prefix) || !canSeeFlag(caller.principal, name) || isArchived(row)) continue
        const fields = differences(stateIn(row, from), stateIn(row, to))
        if (Object.keys(fields).length > 0)
          out.push({
            name,
            fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { from: v.a, to: v.b }])),
            revisions: { from: servedRevisionOf(row, from), to: servedRevisionOf(row, to) },
          })
      }
      return out
    },

    async promote(caller, to, input) {
      requirePermissionSomewhere(caller.principal, 'flag:write')
      const body = parsePromotion(input)
      const committed = store.committed()
      if (!committed.environments.has(to)) throw new NotFoundError(`no environment named ${JSON.stringify(to)}`)
      if (!committed.environments.has(body.from))
        throw new InvalidError(`no environment named ${JSON.stringify(body.from)} to promote from`, 'from', 'unknown environment')
      // writing the target's states, having read the source's; the answer shows the target's as
      // they were (and which flags already equal the source), so reading it too (docs/environments.md#compare-and-promote)
      requireIn(caller.principal, 'flag:write', to)
      requireIn(caller.principal, 'flag:read', body.from)
      requireIn(caller.principal, 'flag:read', to)
      const plan = (read: Snapshot) => {
        // a prefix or all takes the flags the caller may see, as compare lists them; a hidden flag
        // named outright answers as a missing one (docs/environments.md#compare-and-promote)
        const chosen =
          body.flags ??
          [...read.flags.entries()]
            .filter(([n, row]) => n.startsWith(body.prefix ?? '') && canSeeFlag(caller.principal, n) && !isArchived(row))
            .map(([n]) => n)
            .sort()
        const changes: { row: FlagRow; next: FlagRow; diff: Promotion['changes'][number]['diff'] }[] = []
        let unchanged = 0
        for (const name of chosen) {
          const row = read.flags.get(name)
          if (row === undefined || !canSeeFlag(caller.principal, name))
            throw new InvalidError(`no flag named ${JSON.stringify(name)}`, 'flags', 'unknown flag')
          if (isArchived(row)) throw archivedConflict(name)
          const wanted = stateIn(row, body.from)
          const fields = differences(stateIn(row, to), wanted)
          if (Object.keys(fields).length === 0) {
            unchanged++
            continue
          }
          const next: FlagRow = { ...withStateIn(row, to, wanted), updatedAt: now().toISOString(), revision: row.revision + 1 }
          changes.push({
            row,
            next: stampServed(row, next),
            diff: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { before: v.a, after: v.b }])),
          })
        }
        return { changes, unchanged }
      }
      const answer = (p: ReturnType<typeof plan>, dryRun: boolean): Promotion => ({
        dryRun,
        changes: p.changes.map((c) => ({ name: c.row.name, revision: c.next.revision, diff: c.diff })),
        unchanged: p.unchanged,
      })
      if (body.dryRun) {
        // what the commit's check would say of it: a protected target refuses it (docs/change-control.md#dry-runs)
        const planned = plan(committed)
        const refusal = applyRefusal(commitMeta(caller, 'api', to), committed, (tx) => {
          for (const c of planned.changes) tx.put('flags', c.next)
        })
        return { ...answer(planned, true), ...(refusal ? { applyError: refusal } : {}) }
      }
      // audited as changes of the target environment (its view before and after); a protected
      // target takes promotions as change requests: the store refuses them (docs/change-control.md#one-check-for-every-path)
      const { result } = await store.transact(commitMeta(caller, 'api', to), (tx) => {
        const p = plan(tx.read)
        for (const c of p.changes) tx.put('flags', c.next)
        return p
      })
      return answer(result, false)
    },
  }
}
