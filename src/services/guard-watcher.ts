/**
 * The watcher of guarded rollouts (docs/guarded-rollouts.md#when-a-guard-trips): checks a rollout's
 * guard when a report moved its counts and every 10 s besides (threshold windows slide without
 * reports), and stops the rollout through one commit when a check trips. It also answers
 * `GET /api/flags/{name}/rollout` from the same reading, so what the API shows is what decides.
 *
 * A trip is one commit that re-reads the flag (`halt`): of two replicas that see the same trip, one
 * commits and the other finds the rollout already stopped.
 */

import { canSeeFlag, requirePermissionSomewhere } from '../domain/access-policy.ts'
import type { Clock } from '../domain/clock.ts'
import { NotFoundError } from '../domain/errors.ts'
import type { Flag } from '../domain/flag.ts'
import { type CheckReading, readGuard, type TotalsOf } from '../domain/guard-reading.ts'
import type { Principal } from '../domain/principal.ts'
import type { Rollout } from '../domain/rollout.ts'
import { GUARD_DEFAULTS, type GuardAction, type GuardEvidence } from '../domain/rollout-guard.ts'
import { type RolloutRead, type RolloutStatus, rolloutRead, rolloutStatus } from '../domain/rollout-status.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import { requireIn } from './environment-access.ts'
import { flagView } from './environment-views.ts'
import type { GuardMetrics } from './guard-metrics.ts'

/** How often every guard is checked without a report. */
export const GUARD_CHECK_MS = 10_000

/** `GET /api/flags/{name}/rollout`. */
export interface RolloutReport {
  rollout: RolloutRead
  status: RolloutStatus
  percent: number
  guard: null | { checks: CheckReading[]; checkedAt: string; trippedAt: string | null }
}

/** What a trip asks the store to do (see rollout-halt.ts). */
export interface HaltRequest {
  env: string
  flag: string
  writtenAt: string
  action: GuardAction
  evidence: GuardEvidence
}

/** What the watcher needs. */
export interface GuardWatcherDeps {
  store: Store
  metrics: Pick<GuardMetrics, 'totals'>
  now: Clock
  /** The default environment: a read naming none is about it. */
  environment: string
  /** Stops a rollout in one commit; 'unchanged' when it was already stopped or rewritten. */
  halt: (request: HaltRequest) => Promise<'halted' | 'unchanged'>
  /** A check or a trip that failed (the next report or timer tries again). */
  onError?: (err: unknown) => void
  /** How often `start()`'s timer checks every guard (default `GUARD_CHECK_MS`; a test shortens it). */
  checkEveryMs?: number
}

/** The watcher. */
export interface GuardWatcher {
  /** Checks the guards of `flags` in `env` (a report moved their counts); resolves when their trips are committed. */
  reported(env: string, flags: Iterable<string>): Promise<void>
  /** Checks every guard of every environment (the timer's round). */
  checkAll(): Promise<void>
  /** What `GET /api/flags/{name}/rollout` answers. */
  report(principal: Principal, name: string, env?: string): RolloutReport
  /** Starts the timer. */
  start(): void
  /** Stops the timer and waits for trips under way. */
  stop(): Promise<void>
}

/** The moment a rollout's guard counts from: when the rollout was last written (its start for one written before guards). */
export const guardSince = (r: Rollout): number => Date.parse(r.writtenAt ?? r.start)

// the guarded rollouts of a snapshot, by environment and flag name (made once per snapshot)
const guardedOf = new WeakMap<ReadonlyMap<string, unknown>, { env: string; flag: string }[]>()
function guardedRollouts(snapshot: Snapshot): { env: string; flag: string }[] {
  const kept = guardedOf.get(snapshot.flags)
  if (kept) return kept
  const out: { env: string; flag: string }[] = []
  for (const [name, row] of snapshot.flags)
    if (row.archived !== true)
      for (const env of snapshot.environments.keys()) if (flagView(row, env).rollout?.guard) out.push({ env, flag: name })
  guardedOf.set(snapshot.flags, out)
  return out
}

/** Creates the watcher. */
export function createGuardWatcher(deps: GuardWatcherDeps): GuardWatcher {
  const { store, metrics, now } = deps
  const underWay = new Map<string, Promise<void>>()
  let timer: ReturnType<typeof setInterval> | undefined

  const totalsIn =
    (env: string, flag: string): TotalsOf =>
    (metric, sinceMs) =>
      metrics.totals(env, flag, metric, sinceMs)

  const readingOf = (env: string, view: Flag, nowMs: number) => {
    const r = view.rollout as Rollout & { guard: NonNullable<Rollout['guard']> }
    const { status } = rolloutStatus(r, nowMs)
    return readGuard(r.guard, { variant: r.variant, sinceMs: guardSince(r), nowMs }, totalsIn(env, view.name), status === 'running')
  }

  /** Checks one rollout, and commits its trip. */
  const checkOne = async (env: string, name: string): Promise<void> => {
    const row = store.committed().flags.get(name)
    // an archived flag serves nothing: its guard waits for it to be restored (docs/api.md#archive)
    if (!row || row.archived === true || !store.committed().environments.has(env)) return
    const view = flagView(row, env)
    const r = view.rollout
    if (!r?.guard || r.halted) return
    const nowMs = now().getTime()
    const { checks, tripped } = readingOf(env, view, nowMs)
    const reading = checks[tripped]
    if (reading === undefined) return
    const { kind, treatment, control, difference } = reading
    await deps.halt({
      env,
      flag: name,
      writtenAt: r.writtenAt ?? '',
      action: r.guard.action ?? GUARD_DEFAULTS.action,
      evidence: { check: tripped, kind, treatment, control, difference },
    })
  }

  /** One check of a rollout at a time: a report arriving during a trip waits for it rather than committing twice. */
  const check = (env: string, name: string): Promise<void> => {
    const key = `${env}\u0000${name}`
    const previous = underWay.get(key) ?? Promise.resolve()
    const next = previous
      .then(() => checkOne(env, name))
      .catch((err) => deps.onError?.(err))
      .finally(() => {
        if (underWay.get(key) === next) underWay.delete(key)
      })
    underWay.set(key, next)
    return next
  }

  return {
    async reported(env, flags) {
      await Promise.all([...flags].map((name) => check(env, name)))
    },
    async checkAll() {
      await Promise.all(guardedRollouts(store.committed()).map(({ env, flag }) => check(env, flag)))
    },
    report(principal, name, env) {
      requirePermissionSomewhere(principal, 'flag:read')
      const snapshot = store.committed()
      if (env !== undefined && !snapshot.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
      const where = env ?? deps.environment
      requireIn(principal, 'flag:read', where)
      const row = canSeeFlag(principal, name) ? snapshot.flags.get(name) : undefined
      if (!row) throw new NotFoundError(`no flag named ${JSON.stringify(name)}`)
      const view = flagView(row, where)
      const r = view.rollout
      if (!r) throw new NotFoundError(`flag ${name} has no rollout in environment ${where}`)
      const nowMs = now().getTime()
      const { status, percent } = rolloutStatus(r, nowMs)
      if (!r.guard) return { rollout: rolloutRead(r, nowMs), status, percent, guard: null }
      const { checks } = readingOf(where, view, nowMs)
      // a stopped guard counts no more: the check that tripped shows the evidence it tripped on
      const halted = r.halted
      if (halted) {
        const { kind, treatment, control, difference } = halted
        checks[halted.check] = { kind, state: 'tripped', treatment, control, difference }
      }
      return {
        rollout: rolloutRead(r, nowMs),
        status,
        percent,
        guard: { checks, checkedAt: halted?.at ?? new Date(nowMs).toISOString(), trippedAt: halted?.at ?? null },
      }
    },
    start() {
      timer ??= setInterval(() => void this.checkAll(), deps.checkEveryMs ?? GUARD_CHECK_MS)
      timer.unref?.()
    },
    async stop() {
      if (timer) clearInterval(timer)
      timer = undefined
      await Promise.all([...underWay.values()])
    },
  }
}
