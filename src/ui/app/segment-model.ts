/**
 * A segment's rule in the builder (docs/ui.md): conditions that must all (`and`) or any (`or`)
 * hold, written as flagd JsonLogic and read back only when writing it again gives the same JSON.
 */

import { type Condition, conditionRule, onlyKey, readCondition } from './rule-model.ts'

/** A segment's rule as the builder shows it: conditions that must all (`and`) or any (`or`) hold. */
export interface SegmentModel {
  join: 'and' | 'or'
  conditions: Condition[]
}

/** The JsonLogic of a segment model. */
export function writeSegment(m: SegmentModel): unknown {
  return m.conditions.length === 1 ? conditionRule(m.conditions[0] as Condition) : { [m.join]: m.conditions.map(conditionRule) }
}

/** The builder's model of a segment rule, or `undefined` when it cannot show it exactly. */
export function readSegment(rule: unknown): SegmentModel | undefined {
  const e = onlyKey(rule)
  let model: SegmentModel | undefined
  if (e && (e[0] === 'and' || e[0] === 'or') && Array.isArray(e[1]) && e[1].length > 1) {
    const conditions = e[1].map(readCondition)
    if (conditions.every((c) => c !== undefined)) model = { join: e[0], conditions: conditions as Condition[] }
  } else {
    const c = readCondition(rule)
    if (c) model = { join: 'and', conditions: [c] }
  }
  return model && JSON.stringify(writeSegment(model)) === JSON.stringify(rule) ? model : undefined
}
