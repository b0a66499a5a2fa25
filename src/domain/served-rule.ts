/**
 * A flag's served rule compiled (docs/targeting.md#rules): its targeting with its rollout in front when
 * it has one (rollout.ts). A served snapshot compiles each flag's once (services/served-snapshot.ts).
 */

import type { Flag, JsonObject } from './flag.ts'
import { servedRollout, servedTargeting } from './rollout.ts'
import { inRollout } from './rollout-bucket.ts'
import { RuleFault } from './targeting/json-logic-values.ts'
import { compileRule, type Expr } from './targeting/rule-compiler.ts'

/** The flag's rule compiled against `segments`, or `undefined` when it has none; a rule that no longer compiles always fails. */
export function compileServedRule(flag: Flag, segments: ReadonlyMap<string, unknown>): Expr | undefined {
  const rule = servedTargeting(flag)
  if (rule === undefined) return undefined
  const compile = (r: JsonObject) => {
    // validated at write, so problems here mean a segment went missing since: evaluation fails
    const compiled = compileRule(r, { segments })
    return compiled.problems.length === 0 ? compiled.expr : failing(compiled.problems.map((p) => `${p.field}: ${p.reason}`).join('; '))
  }
  const rollout = flag.rollout && servedRollout(flag.rollout)
  // a rollout by targetingKey decides natively what its rule decides (tests hold the two together)
  if (rollout !== undefined && rollout.by === undefined) {
    const rest = flag.targeting === undefined ? undefined : compile(flag.targeting)
    return (data, run) => {
      const key = (data as { targetingKey?: unknown }).targetingKey
      if (inRollout(rollout, key ? `${run.flagKey}${String(key)}` : undefined, run.timestamp)) return rollout.variant
      return rest === undefined ? null : rest(data, run)
    }
  }
  return compile(rule)
}

/** A rule that always fails with `message` (a flag whose rule no longer compiles). */
function failing(message: string): Expr {
  return () => {
    throw new RuleFault(message)
  }
}
