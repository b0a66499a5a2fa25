/**
 * Changes a later time brings to imported flags (GO Feature Flag's future `scheduledRollout` steps)
 * made into scheduled change requests of the environment imported into, in the import's own
 * transaction (docs/migrations.md#changes-a-later-time-brings). The importer is their author; each
 * is made on the flag as the import leaves it, and says whether it will apply by itself at its time.
 */

import { can } from '../domain/access-policy.ts'
import { type ChangeRequest, type ChangeRequestState, PENDING_STATES, SHARED_REQUESTABLE_FIELDS } from '../domain/change-request.ts'
import { ValidationFailedError } from '../domain/errors.ts'
import { servedRevisionOf } from '../domain/flag-row.ts'
import type { ScheduledImport } from '../domain/foreign/foreign-translation.ts'
import { newId } from '../domain/new-id.ts'
import { setOwn } from '../domain/own-property.ts'
import { actorOf, type Principal } from '../domain/principal.ts'
import type { Snapshot, Tx } from '../storage/store.ts'
import { stateWith } from './change-request-deps.ts'
import { canIn } from './environment-access.ts'
import { withEnvironmentFields } from './environment-state-write.ts'
import { flagView } from './environment-views.ts'

/** One later change as the import's answer lists it. */
export interface ScheduledImportResult {
  /** The flag's name as imported. */
  flag: string
  /** When it applies (ISO 8601). */
  at: string
  /** The change request made for it (or one already pending with the same change); `null` in a dry run that would make one. */
  changeRequest: string | null
  /** The request's state: `scheduled` applies by itself at `at`; `open` waits for approvals. */
  state: ChangeRequestState
  /** Why it will not apply by itself (approvals the environment needs), or not make the flag serve (off in a protected environment). */
  note?: string
}

const sharedFieldsOf = (changes: Record<string, unknown>) => SHARED_REQUESTABLE_FIELDS.filter((field) => Object.hasOwn(changes, field))

/**
 * Why the later changes of one flag cannot become change requests in `env` made by `principal`, or
 * `undefined`: the importer may not make requests there, or a change sets fields shared by every
 * environment while another environment is protected (such a request is made there).
 */
export function scheduleRefusal(snapshot: Snapshot, principal: Principal, env: string) {
  const guarded = [...snapshot.environments.values()].find((e) => e.protected && e.name !== env)
  const targetProtected = snapshot.environments.get(env)?.protected === true
  return (steps: readonly ScheduledImport[]): string | undefined => {
    const when = steps.map((s) => s.at).join(', ')
    if (!canIn(principal, 'flag:write', env))
      return `it changes later (${when}), which becomes a change request in ${env}: the importer needs flag:write there`
    for (const step of steps) {
      const shared = sharedFieldsOf(step.changes)
      if (shared.length === 0) continue
      if (!can(principal, 'flag:write'))
        return `its change of ${step.at} sets ${shared.join(', ')}, shared by every environment: the importer needs flag:write in every environment`
      if (!targetProtected && guarded !== undefined)
        return `its change of ${step.at} sets ${shared.join(', ')}, shared by every environment, while ${guarded.name} is protected: import into ${guarded.name}, or make that change as a change request there`
    }
    return undefined
  }
}

/**
 * Whether `flag` is off in a protected `env` that `principal` may not bypass, and none of its later
 * changes turns it on: a flag the import creates there starts off (docs/change-control.md#protected-environments).
 */
function staysOff(snapshot: Snapshot, principal: Principal, env: string, flag: string, scheduled: readonly ScheduledImport[]): boolean {
  if (snapshot.environments.get(env)?.protected !== true || canIn(principal, 'flag:bypass', env)) return false
  if (scheduled.some((s) => s.flag === flag && s.changes.enabled === true)) return false
  const row = snapshot.flags.get(flag)
  return row === undefined || flagView(row, env).enabled === false
}

/** The note of a request that will not apply by itself at its time, or will not make the flag serve; or nothing. */
function noteOf(snapshot: Snapshot, env: string, state: ChangeRequestState, at: string, off: boolean): Pick<ScheduledImportResult, 'note'> {
  const notes: string[] = []
  if (state === 'open') {
    const needed = snapshot.environments.get(env)?.requiredApprovals ?? 0
    notes.push(
      `${env} needs ${needed} approval${needed === 1 ? '' : 's'}: it applies at ${at} only once approved (approved later, it applies at once)`,
    )
  }
  if (off)
    notes.push(
      `the flag is off in ${env}, which is protected: the change applies, but the flag serves nothing there until a change request turns it on`,
    )
  return notes.length > 0 ? { note: notes.join('; ') } : {}
}

/** What a dry run would schedule: the requests' states (a pending one that already makes the change named), making none. */
export function previewScheduled(
  snapshot: Snapshot,
  principal: Principal,
  env: string,
  scheduled: readonly ScheduledImport[],
): ScheduledImportResult[] {
  const index = pendingIndex(snapshot, env)
  return scheduled.map((step) => {
    const { flag, at } = step
    const existing = sameRequest(index, step)
    const off = staysOff(snapshot, principal, env, flag, scheduled)
    const state = existing?.state ?? stateWith(snapshot, { environment: env, scheduledAt: at }, 0)
    return { flag, at, changeRequest: existing?.id ?? null, state, ...noteOf(snapshot, env, state, at, off) }
  })
}

/** The pending requests of `env` by flag and time, each holding one change: where an import made again finds its own (made once per call). */
type PendingIndex = Map<string, ChangeRequest[]>

const pendingKey = (flag: string, at: string | null | undefined) => `${flag}\u0000${at ?? ''}`

/** The index of `snapshot`'s pending one-change requests of `env` (one pass over the requests). */
function pendingIndex(snapshot: Snapshot, env: string): PendingIndex {
  const out: PendingIndex = new Map()
  for (const r of snapshot.changeRequests.values()) {
    const only = r.changes[0]
    if (r.environment !== env || !PENDING_STATES.has(r.state) || r.changes.length !== 1 || only === undefined) continue
    const key = pendingKey(only.flag, r.scheduledAt)
    out.set(key, [...(out.get(key) ?? []), r])
  }
  return out
}

/** The pending request of the index that already makes this very change (an import made again), if any. */
function sameRequest(index: PendingIndex, step: ScheduledImport): ChangeRequest | undefined {
  const wanted = JSON.stringify(step.changes)
  return index.get(pendingKey(step.flag, step.at))?.find((r) => JSON.stringify(r.changes[0]?.set) === wanted)
}

/**
 * Makes each later change a change request of `env` in `tx` (after the import's writes), authored by
 * `principal` at time `at`; a pending request that already makes the same change is kept, not made
 * twice. A flag's first request holds its revision as imported; its later ones follow the earlier
 * and hold none (each would otherwise find the flag changed by the one before).
 */
export function scheduleInTransaction(
  tx: Tx,
  principal: Principal,
  env: string,
  scheduled: readonly ScheduledImport[],
  at: string,
): ScheduledImportResult[] {
  const out: ScheduledImportResult[] = []
  const seen = new Set<string>()
  const index = pendingIndex(tx.read, env)
  for (const step of scheduled) {
    const first = !seen.has(step.flag)
    seen.add(step.flag)
    const existing = sameRequest(index, step)
    const off = staysOff(tx.read, principal, env, step.flag, scheduled)
    if (existing !== undefined) {
      out.push({
        flag: step.flag,
        at: step.at,
        changeRequest: existing.id,
        state: existing.state,
        ...noteOf(tx.read, env, existing.state, step.at, off),
      })
      continue
    }
    const current = tx.read.flags.get(step.flag)
    if (current === undefined) continue
    const made = withEnvironmentFields(tx.read, current, env, step.changes, at, `scheduled.${step.flag}.`)
    if ('problems' in made) throw new ValidationFailedError(made.problems)
    const state = stateWith(tx.read, { environment: env, scheduledAt: step.at }, 0)
    const baseRevisions: Record<string, number> = {}
    if (first) setOwn(baseRevisions, step.flag, servedRevisionOf(current, env))
    const request: ChangeRequest = {
      id: newId('cr'),
      environment: env,
      title: `Scheduled change of ${step.flag} from the import`,
      description: `A later step of the imported file (${step.at}).`,
      state,
      author: actorOf(principal),
      changes: [{ flag: step.flag, set: step.changes }],
      baseRevisions,
      approvals: [],
      scheduledAt: step.at,
      createdAt: at,
      updatedAt: at,
      revision: 1,
    }
    tx.put('changeRequests', request)
    const key = pendingKey(step.flag, step.at)
    if (PENDING_STATES.has(state)) index.set(key, [...(index.get(key) ?? []), request])
    out.push({ flag: step.flag, at: step.at, changeRequest: request.id, state, ...noteOf(tx.read, env, state, step.at, off) })
  }
  return out
}
