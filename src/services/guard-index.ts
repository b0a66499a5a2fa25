/**
 * Which metrics the guards of an environment read (docs/guarded-rollouts.md#the-applications-metrics):
 * metric → flag → what a point must be to count (its kind, one of the flag's variants) and since
 * when (the moment the rollout was last written). Built once per committed revision and
 * environment, so a report of any size costs one lookup per point.
 */

import type { Flag } from '../domain/flag.ts'
import type { GuardCheck } from '../domain/rollout-guard.ts'
import type { Snapshot } from '../storage/store.ts'
import { flagsIn } from './environment-views.ts'
import { variantNamesOf } from './in-process-usage.ts'

/** A metric one flag's guard reads. */
export interface GuardedMetric {
  kind: 'sum' | 'histogram'
  /** When the rollout was last written (its start when the server kept no `writtenAt`), in ms. */
  fromMs: number
  variants: ReadonlySet<string>
}

/** Metric → flag → what its guard reads. */
export type GuardIndex = ReadonlyMap<string, ReadonlyMap<string, GuardedMetric>>

const kindOf = (check: GuardCheck, metric: string): 'sum' | 'histogram' | undefined => {
  if (check.kind === 'mean') return check.histogram === metric ? 'histogram' : undefined
  if (check.kind === 'threshold') return check.metric === metric ? 'sum' : undefined
  return check.errors === metric || check.total === metric ? 'sum' : undefined
}

/** The metrics `flag`'s guard reads, each with its kind (a metric named as both keeps the first). */
export function guardedMetricsOf(flag: Flag): Map<string, GuardedMetric> {
  const out = new Map<string, GuardedMetric>()
  const rollout = flag.rollout
  const guard = rollout?.guard
  if (rollout === undefined || guard === undefined || !Array.isArray(guard.checks)) return out
  const fromMs = Date.parse(rollout.writtenAt ?? rollout.start)
  if (!Number.isFinite(fromMs)) return out
  const variants = variantNamesOf(flag)
  for (const check of guard.checks) {
    for (const metric of [
      check.kind === 'error-rate' ? check.errors : undefined,
      check.kind === 'error-rate' ? check.total : undefined,
      check.kind === 'mean' ? check.histogram : undefined,
      check.kind === 'threshold' ? check.metric : undefined,
    ]) {
      const kind = metric === undefined ? undefined : kindOf(check, metric)
      if (metric !== undefined && kind !== undefined && !out.has(metric)) out.set(metric, { kind, fromMs, variants })
    }
  }
  return out
}

/** Builds and keeps the index of each environment for the newest committed revision. */
export function createGuardIndexes(): { of(snapshot: Snapshot, env: string): GuardIndex } {
  const kept = new Map<string, { snapshot: Snapshot; index: GuardIndex }>()
  return {
    of(snapshot, env) {
      const found = kept.get(env)
      if (found !== undefined && found.snapshot === snapshot) return found.index
      const index = new Map<string, Map<string, GuardedMetric>>()
      if (snapshot.environments.has(env) || snapshot.environments.size === 0)
        for (const [name, flag] of flagsIn(snapshot, env))
          for (const [metric, guarded] of guardedMetricsOf(flag)) {
            let byFlag = index.get(metric)
            if (byFlag === undefined) index.set(metric, (byFlag = new Map()))
            byFlag.set(name, guarded)
          }
      // one entry per environment that exists: a name that is none is not kept
      if (snapshot.environments.has(env)) kept.set(env, { snapshot, index })
      for (const name of kept.keys()) if (!snapshot.environments.has(name)) kept.delete(name)
      return index
    },
  }
}
