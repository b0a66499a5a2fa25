/**
 * The application metrics guards read (docs/guarded-rollouts.md#the-applications-metrics): data
 * points of the metrics some guard names, reported over OTLP, kept per environment, flag, metric and
 * variant in 10-second buckets for 7 days, durable and added up across replicas.
 */

import type { MeanArm } from '../domain/guard-statistics.ts'
import { COUNT_SLOT, type GuardAmount, type GuardBounds, type GuardLog, HISTOGRAM_SUM_SLOT, SUM_SLOT } from '../storage/shared-tables.ts'
import type { Store } from '../storage/store.ts'
import { addInto, amountsOf, impactSeriesOf, keyOf, positionOf, type Steps, sameBounds, slotOf, totalsOf } from './guard-amounts.ts'
import { createGuardIndexes, type GuardedMetric } from './guard-index.ts'
import { cumulativeIncrease, GuardSeriesMemory } from './guard-series-memory.ts'

/** One data point a guard may read, as the OTLP transport decoded it (before any check of flag, variant or metric). */
export interface MetricPoint {
  metric: string
  kind: 'sum' | 'histogram'
  /** A digest of the resource, scope and point attributes (never their text). */
  series: string
  flag: string
  variant: string
  cumulative: boolean
  /** `startTimeUnixNano` as decimal text ('' when absent). */
  start: string
  /** `timeUnixNano` as decimal text ('' when absent). */
  time: string
  /** A sum's value. */
  value?: number
  /** A histogram's count, sum, explicit bounds and bucket counts. */
  count?: number
  sum?: number
  bounds?: number[]
  buckets?: number[]
}

/** What one variant of a flag reported for a metric over a span: a sum's increase or a histogram's summary. */
export type VariantTotals = { kind: 'sum'; increase: number } | ({ kind: 'histogram' } & MeanArm)

/** One step of the impact series. */
export type ImpactPoint = { at: string; increase: number } | { at: string; count: number; sum: number }

/** The metric keeping, as guards, the watcher and the impact route use it. */
export interface GuardMetrics {
  /**
   * Keeps the points `env` reports that feed a guard: of a metric a guard of that environment names,
   * of a flag the reporter sees, of one of that flag's variants; every other point is ignored and
   * leaves no trace. Answers the flags whose counts moved (the watcher checks their guards at once).
   */
  ingest(
    reporter: string,
    env: string,
    points: readonly MetricPoint[],
    canSee: (flag: string) => boolean,
    /** Told how many points were refused (a histogram whose bounds differ from the first kept). */
    onRejected?: (count: number) => void,
  ): Set<string>
  /**
   * Each variant's totals of `metric` for `flag` in `env` from `sinceMs` (inclusive, rounded down to
   * its bucket) to now, every replica's. Sums are kept per step for the last 24 h; before that, and for
   * histograms, the totals are those since the rollout was written (what the guard reads).
   */
  totals(env: string, flag: string, metric: string, sinceMs: number): Map<string, VariantTotals>
  /**
   * The per-variant series of `metric` for `flag` in `env` from `sinceMs`, in steps of `stepSeconds`
   * (steps without reports left out), read from the log; `undefined` when no guard of the flag names it.
   */
  series(
    env: string,
    flag: string,
    metric: string,
    sinceMs: number,
    stepSeconds: number,
  ): Promise<{ kind: 'sum' | 'histogram'; series: { variant: string; points: ImpactPoint[] }[] } | undefined>
  /** Reads every replica's counts back from the log (a timer does it at least every 10 s). */
  refresh(): Promise<void>
  /** Writes what is kept in memory to the store (a timer does it at least every 10 s; `stop` once more). */
  flush(): Promise<void>
  /** Stops the timers and flushes. */
  stop(): Promise<void>
  /** The cumulative series remembered, the bytes they are reckoned to take, and the variants of guarded metrics holding counts. */
  stored(): { series: number; bytes: number; cells: number }
}

/** The length of a step counts are kept in. */
export const GUARD_STEP_MS = 10_000
/** How often counts are written (and, with replicas, read back). */
export const GUARD_FLUSH_MS = 10_000
/** How long the log keeps counts (the impact series reaches this far back). */
export const GUARD_RETENTION_MS = 7 * 86_400_000
/** How far back sums are kept per step in memory (threshold windows are at most this long). */
const RECENT_MS = 86_400_000

/** What the keeping needs. */
export interface GuardMetricsDeps {
  store: Store
  log: GuardLog
  /** The process's clock in ms (docs/development.md#time). */
  now: () => number
  /** A failed write (its counts are kept for the next). */
  onFlushError?: (err: unknown) => void
  /** How often the timer writes (default `GUARD_FLUSH_MS`; a test shortens it rather than wait 10 s). */
  flushMs?: number
}

/** What the log held for one guarded metric of a flag at the last read, plus what this replica wrote since. */
interface Loaded {
  fromMs: number
  totals: Map<string, number[]>
  /** Sums only: each step's increase over the last 24 h. */
  recent: Map<string, Map<number, number>>
}

/** Creates the keeping (see {@link GuardMetrics}); its timer writes every 10 s. */
export function createGuardMetrics(deps: GuardMetricsDeps): GuardMetrics {
  const { store, log, now } = deps
  const indexes = createGuardIndexes()
  const memory = new GuardSeriesMemory()
  let pending = new Map<string, Steps>()
  let writing = new Map<string, Steps>()
  const loaded = new Map<string, Loaded>()
  // the bounds each histogram metric of a flag is kept with, under its rollout write
  const bounds = new Map<string, GuardBounds>()
  let newBounds: GuardBounds[] = []
  let turn: Promise<void> = Promise.resolve()
  const inTurn = (work: () => Promise<void>): Promise<void> => {
    const run = turn.then(work)
    turn = run.catch(() => {})
    return run
  }
  const guardedOf = (env: string, flag: string, metric: string) => indexes.of(store.committed(), env).get(metric)?.get(flag)
  /** Every guarded metric of every environment, at the committed revision. */
  const everyGuarded = () => {
    const snapshot = store.committed()
    const out: { env: string; flag: string; metric: string; guarded: GuardedMetric }[] = []
    for (const env of snapshot.environments.keys())
      for (const [metric, byFlag] of indexes.of(snapshot, env))
        for (const [flag, guarded] of byFlag) out.push({ env, flag, metric, guarded })
    return out
  }

  const addPending = (key: string, variant: string, step: number, amounts: readonly number[]) => {
    let steps = pending.get(key)
    if (steps === undefined) pending.set(key, (steps = new Map()))
    let byStep = steps.get(variant)
    if (byStep === undefined) steps.set(variant, (byStep = new Map()))
    const into = byStep.get(step)
    if (into === undefined) byStep.set(step, [...amounts])
    else addInto(into, amounts)
  }

  /** Reads one guarded metric back from the log (every replica's counts since the rollout was written). */
  const load = async (env: string, flag: string, metric: string, guarded: GuardedMetric) => {
    const key = keyOf(env, flag, metric)
    const totals = new Map<string, number[]>()
    for (const row of await log.read(env, flag, metric, guarded.fromMs, 'all')) {
      let into = totals.get(row.variant)
      if (into === undefined) totals.set(row.variant, (into = []))
      const at = positionOf(guarded.kind, row.slot)
      into[at] = (into[at] ?? 0) + row.value
    }
    for (const into of totals.values()) for (let i = 0; i < into.length; i++) into[i] ??= 0
    const recent = new Map<string, Map<number, number>>()
    if (guarded.kind === 'sum') {
      const since = Math.max(guarded.fromMs, now() - RECENT_MS)
      // by the exact start of each step (the one the rollout was written in starts at the write)
      for (const row of await log.read(env, flag, metric, since - (since % GUARD_STEP_MS), [SUM_SLOT], 1)) {
        let byStep = recent.get(row.variant)
        if (byStep === undefined) recent.set(row.variant, (byStep = new Map()))
        byStep.set(row.atMs, row.value)
      }
    }
    loaded.set(key, { fromMs: guarded.fromMs, totals, recent })
    if (guarded.kind === 'histogram') {
      const stored = await log.bounds(env, flag, metric)
      const mine = bounds.get(key)
      if (stored !== undefined && stored.fromMs >= guarded.fromMs && (mine === undefined || mine.fromMs <= stored.fromMs))
        bounds.set(key, stored)
    }
  }
  /** Loads what is not loaded under the current rollout write (and, with replicas, everything). */
  const refreshAll = async (everything: boolean) => {
    const guardedNow = new Set<string>()
    for (const { env, flag, metric, guarded } of everyGuarded()) {
      const key = keyOf(env, flag, metric)
      guardedNow.add(key)
      const have = loaded.get(key)
      if (everything || have === undefined || have.fromMs !== guarded.fromMs) await load(env, flag, metric, guarded)
    }
    // a guard removed (or its flag deleted) leaves nothing behind in memory; the log keeps its 7 days
    for (const key of loaded.keys()) if (!guardedNow.has(key)) loaded.delete(key)
    for (const key of bounds.keys()) if (!guardedNow.has(key)) bounds.delete(key)
  }
  /** Adds what was written to what is loaded (so a single process never reads its own counts back). */
  const settle = (written: Map<string, Steps>) => {
    const cutoff = now() - RECENT_MS
    for (const [key, steps] of written) {
      const have = loaded.get(key)
      if (have === undefined) continue
      for (const [variant, byStep] of steps) {
        let totals = have.totals.get(variant)
        if (totals === undefined) have.totals.set(variant, (totals = []))
        for (const [step, amounts] of byStep) {
          if (step < have.fromMs) continue
          addInto(totals, amounts)
          if (amounts.length !== 1) continue
          let recent = have.recent.get(variant)
          if (recent === undefined) have.recent.set(variant, (recent = new Map()))
          recent.set(step, (recent.get(step) ?? 0) + (amounts[0] as number))
        }
      }
    }
    for (const have of loaded.values())
      for (const recent of have.recent.values()) for (const step of recent.keys()) if (step < cutoff) recent.delete(step)
  }

  let lastPrune = Number.NEGATIVE_INFINITY
  const flush = () =>
    inTurn(async () => {
      writing = pending
      pending = new Map()
      const recorded = newBounds
      newBounds = []
      const amounts: GuardAmount[] = []
      for (const [key, steps] of writing) {
        const [env, flag, metric] = key.split('\u0000') as [string, string, string]
        for (const [variant, byStep] of steps)
          for (const [atMs, values] of byStep) {
            // a sum's amounts are one increase; a histogram's are count, sum and buckets
            const kind = values.length === 1 ? 'sum' : 'histogram'
            values.forEach((value, i) => {
              if (value !== 0) amounts.push({ env, flag, metric, variant, atMs, slot: slotOf(kind, i), value })
            })
          }
      }
      try {
        await log.add(amounts, recorded)
        settle(writing)
      } catch (err) {
        for (const [key, steps] of writing)
          for (const [variant, byStep] of steps) for (const [step, values] of byStep) addPending(key, variant, step, values)
        newBounds = recorded.concat(newBounds)
        deps.onFlushError?.(err)
      } finally {
        writing = new Map()
      }
      // older than 7 days: forgotten, once an hour (by the injected clock)
      if (now() - lastPrune >= 3_600_000) {
        lastPrune = now()
        await log.prune(now() - GUARD_RETENTION_MS)
      }
      await refreshAll(log.shared)
    })

  const timer = setInterval(() => void flush().catch((err) => deps.onFlushError?.(err)), deps.flushMs ?? GUARD_FLUSH_MS)
  timer.unref?.()
  // what an earlier run (or another replica) counted is read once at start
  void inTurn(() => refreshAll(false)).catch((err) => deps.onFlushError?.(err))

  /** The amounts of one variant from this replica not yet in `loaded`, from step `sinceStep` on. */
  const unwritten = (key: string, sinceStep: number) => {
    const out = new Map<string, number[]>()
    for (const source of [writing, pending])
      for (const [variant, byStep] of source.get(key) ?? [])
        for (const [step, values] of byStep) {
          if (step < sinceStep) continue
          let into = out.get(variant)
          if (into === undefined) out.set(variant, (into = []))
          addInto(into, values)
        }
    return out
  }

  return {
    ingest(reporter, env, points, canSee, onRejected) {
      const moved = new Set<string>()
      const snapshot = store.committed()
      const index = indexes.of(snapshot, env)
      if (index.size === 0) return moved
      const at = now()
      const aligned = at - (at % GUARD_STEP_MS)
      let rejected = 0
      for (const point of points) {
        const guarded = index.get(point.metric)?.get(point.flag)
        // checked before anything is kept: a point that cannot count leaves no trace
        if (guarded === undefined || guarded.kind !== point.kind || !guarded.variants.has(point.variant) || !canSee(point.flag)) continue
        // an archived flag answers no one, so no point is of its variants (docs/api.md#archive)
        if (snapshot.flags.get(point.flag)?.archived === true) continue
        const key = keyOf(env, point.flag, point.metric)
        if (point.kind === 'histogram') {
          const have = bounds.get(key)
          const mine = point.bounds ?? []
          if (have === undefined || have.fromMs < guarded.fromMs) {
            const fresh = { env, flag: point.flag, metric: point.metric, fromMs: guarded.fromMs, bounds: [...mine] }
            bounds.set(key, fresh)
            newBounds.push(fresh)
          } else if (!sameBounds(have.bounds, mine)) {
            rejected++
            continue
          }
        }
        let amounts = amountsOf(point)
        if (point.cumulative) {
          const series = `${reporter}\u0000${point.series}`
          const before = memory.get(series)
          const increase = cumulativeIncrease(before, guarded.fromMs, point.start, amounts)
          // a late point of a series leaves it where it was (docs/guarded-rollouts.md#the-applications-metrics)
          if (increase === 'stale') continue
          memory.set(series, { epoch: guarded.fromMs, start: point.start, values: amounts })
          amounts = increase
        }
        // before the rollout is written (or starts, where no write time is kept) nothing counts
        if (at < guarded.fromMs) continue
        if (amounts.every((v) => v === 0)) continue
        // the step the rollout was written in starts at the write: what came before it is not the guard's
        addPending(key, point.variant, Math.max(aligned, guarded.fromMs), amounts)
        moved.add(point.flag)
      }
      if (rejected > 0) onRejected?.(rejected)
      return moved
    },
    totals(env, flag, metric, sinceMs) {
      const out = new Map<string, VariantTotals>()
      const guarded = guardedOf(env, flag, metric)
      if (guarded === undefined) return out
      const key = keyOf(env, flag, metric)
      const sinceStep = sinceMs - (sinceMs % GUARD_STEP_MS)
      const fromStep = guarded.fromMs
      const have = loaded.get(key)
      const whole = guarded.kind === 'histogram' || sinceStep <= fromStep || sinceMs < now() - RECENT_MS
      const sums = new Map<string, number[]>()
      if (have !== undefined && have.fromMs === guarded.fromMs) {
        if (whole) for (const [variant, totals] of have.totals) sums.set(variant, [...totals])
        else
          for (const [variant, recent] of have.recent) {
            let increase = 0
            for (const [step, value] of recent) if (step >= sinceStep) increase += value
            sums.set(variant, [increase])
          }
      }
      for (const [variant, values] of unwritten(key, whole ? fromStep : sinceStep)) {
        const into = sums.get(variant)
        if (into === undefined) sums.set(variant, values)
        else addInto(into, values)
      }
      for (const [variant, v] of sums) out.set(variant, totalsOf(guarded.kind, v, bounds.get(key)?.bounds ?? []))
      return out
    },
    async series(env, flag, metric, sinceMs, stepSeconds) {
      const guarded = guardedOf(env, flag, metric)
      if (guarded === undefined) return undefined
      const stepMs = stepSeconds * 1000
      const slots = guarded.kind === 'sum' ? [SUM_SLOT] : [COUNT_SLOT, HISTOGRAM_SUM_SLOT]
      let rows: { variant: string; slot: number; atMs: number; value: number }[] = []
      const read = async () => {
        rows = await log.read(env, flag, metric, sinceMs - (sinceMs % stepMs), slots, stepMs)
        // with this replica's counts not written yet
        for (const source of [writing, pending])
          for (const [variant, byStep] of source.get(keyOf(env, flag, metric)) ?? [])
            for (const [step, values] of byStep)
              if (step >= sinceMs - (sinceMs % stepMs))
                for (const slot of slots)
                  rows.push({ variant, slot, atMs: step - (step % stepMs), value: values[positionOf(guarded.kind, slot)] ?? 0 })
      }
      await inTurn(read)
      const series = impactSeriesOf(guarded.kind, rows)
      return { kind: guarded.kind, series }
    },
    refresh: () => inTurn(() => refreshAll(true)),
    flush,
    async stop() {
      clearInterval(timer)
      await flush()
    },
    stored() {
      // a cell: a variant of a guarded metric of a flag that holds counts (in memory or written)
      const cells = new Set<string>()
      for (const [key, have] of loaded) for (const variant of have.totals.keys()) cells.add(`${key}\u0000${variant}`)
      for (const [key, steps] of pending) for (const variant of steps.keys()) cells.add(`${key}\u0000${variant}`)
      return { ...memory.stored(), cells: cells.size }
    },
  }
}
