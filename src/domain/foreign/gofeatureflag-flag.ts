/**
 * One GO Feature Flag flag, as it stands at one time, as a flagd flag definition
 * (docs/migrations.md#from-go-feature-flag): its variations as variants, its targeting rules in
 * order then its default rule as one `if`, a progressive default rule as a flagd rollout, the
 * contexts the tool answers with an error (no bucketing key where one is needed, outside the
 * experimentation window) left to the application's default.
 */

import { isJsonObject } from '../json-object.ts'
import type { Rollout } from '../rollout.ts'
import { dateOf, progressiveRollout, ruleOutcome } from './gofeatureflag-outcome.ts'
import { queryLogic } from './gofeatureflag-query-logic.ts'
import { parseGoFeatureFlagQuery } from './gofeatureflag-query-parser.ts'

/** A translated flag state: its definition, and whether a share of contexts (a split or a rollout) decides. */
export type FlagState = { definition: Record<string, unknown>; shares: boolean } | { problem: string }

/** The flagd type of the variations' values, or why there is none. */
export function typeOfVariations(variations: Record<string, unknown>): { type: string } | { problem: string } {
  const values = Object.values(variations)
  if (values.length === 0) return { problem: 'has no variations' }
  const kind = (v: unknown) =>
    typeof v === 'boolean'
      ? 'BOOLEAN'
      : typeof v === 'number' && Number.isFinite(v)
        ? Number.isInteger(v)
          ? 'INTEGER'
          : 'NUMBER'
        : typeof v === 'string'
          ? 'STRING'
          : isJsonObject(v)
            ? 'OBJECT'
            : Array.isArray(v)
              ? 'LIST'
              : 'NULL'
  const kinds = new Set(values.map(kind))
  if (kinds.has('LIST')) return { problem: 'a variation is a list, and no flagd type serves any list' }
  if (kinds.has('NULL')) return { problem: 'a variation has no value' }
  if (kinds.size === 2 && kinds.has('INTEGER') && kinds.has('NUMBER')) return { type: 'NUMBER' }
  if (kinds.size > 1) return { problem: `the variations mix types (${[...kinds].sort().join(', ')})` }
  return { type: [...kinds][0] as string }
}

/** The rules the tool reads in order: `targeting` without the disabled ones. */
function activeRules(flag: Record<string, unknown>): { rules: { rule: Record<string, unknown>; at: number }[] } | { problem: string } {
  const raw = flag.targeting ?? []
  if (!Array.isArray(raw)) return { problem: 'targeting must be a list of rules' }
  const rules: { rule: Record<string, unknown>; at: number }[] = []
  for (const [at, rule] of raw.entries()) {
    if (!isJsonObject(rule)) return { problem: `targeting[${at}] must be a rule` }
    if (rule.disable !== true) rules.push({ rule, at })
  }
  return { rules }
}

/** `flag` (with its steps already applied) as a flagd definition at `nowMs`, or the first problem. */
export function translateFlagState(flag: Record<string, unknown>, nowMs: number): FlagState {
  const variations = flag.variations
  if (!isJsonObject(variations)) return { problem: 'has no variations' }
  const typed = typeOfVariations(variations)
  if ('problem' in typed) return typed
  const active = activeRules(flag)
  if ('problem' in active) return active
  const defaultRule = flag.defaultRule
  if (!isJsonObject(defaultRule)) return { problem: 'has no defaultRule (GO Feature Flag refuses the flag)' }
  const by = typeof flag.bucketingKey === 'string' && flag.bucketingKey !== '' ? flag.bucketingKey : undefined
  let shares = false
  const branches: unknown[] = []
  for (const { rule, at } of active.rules) {
    const where = `targeting[${at}]`
    if (rule.progressiveRollout !== undefined && rule.progressiveRollout !== null)
      return {
        problem: `${where}: a progressive rollout inside a targeting rule has no flagd form (a flagd rollout is in front of every rule)`,
      }
    if (typeof rule.query !== 'string') return { problem: `${where}: has no query (GO Feature Flag refuses the flag)` }
    const condition = conditionOf(rule.query.trim())
    if ('problem' in condition) return { problem: `${where}.${condition.problem}` }
    const outcome = ruleOutcome(rule, variations, by)
    if ('problem' in outcome) return { problem: `${where}: ${outcome.problem}` }
    shares ||= outcome.split
    branches.push(condition.logic, outcome.result)
  }
  let rollout: Rollout | undefined
  let last: unknown
  if (defaultRule.progressiveRollout !== undefined && defaultRule.progressiveRollout !== null) {
    const made = progressiveRollout(defaultRule.progressiveRollout, variations, by, nowMs)
    if ('problem' in made) return { problem: `defaultRule: ${made.problem}` }
    if ('constant' in made) last = made.constant
    else {
      if (branches.length > 0)
        return {
          problem: 'defaultRule: a progressive rollout after targeting rules has no flagd form (a flagd rollout is in front of every rule)',
        }
      if (flag.experimentation !== undefined && flag.experimentation !== null)
        return { problem: 'defaultRule: a progressive rollout in an experimentation window has no flagd form' }
      rollout = made.rollout
      last = made.initial
      shares = true
    }
  } else {
    const outcome = ruleOutcome(defaultRule, variations, by)
    if ('problem' in outcome) return { problem: `defaultRule: ${outcome.problem}` }
    shares ||= outcome.split
    last = outcome.result
  }
  // the contexts the tool answers with an error get the application's default: no value, a rule answering null
  const guards: unknown[] = []
  const needsKey = requiresBucketing(flag)
  if (by !== undefined) guards.push(needsKey ? { var: by } : { '!==': [{ var: by }, null] })
  else if (needsKey) guards.push({ var: 'targetingKey' })
  const window = experimentWindow(flag.experimentation)
  if ('problem' in window) return window
  if (window.logic !== undefined) guards.push(window.logic)
  const definition: Record<string, unknown> = { type: typed.type, variants: { ...variations } }
  const answer = branches.length === 0 ? last : { if: [...branches, last] }
  if (guards.length === 0 && typeof answer === 'string') {
    definition.valueExists = true
    definition.value = variations[answer]
  } else {
    definition.valueExists = false
    definition.defaultValue = null
    definition.targeting = guards.length === 0 ? answer : { if: [guards.length === 1 ? guards[0] : { and: guards }, answer, null] }
  }
  if (rollout !== undefined) definition.rollout = rollout
  definition.enabled = flag.disable !== true
  return { definition, shares }
}

function conditionOf(query: string): { logic: unknown } | { problem: string } {
  if (query === '') return { logic: true }
  if (query.startsWith('{'))
    return {
      problem:
        'query: a JsonLogic query: GO Feature Flag evaluates it with its own JsonLogic library, whose results flagd’s cannot be promised to match',
    }
  const parsed = parseGoFeatureFlagQuery(query)
  if ('error' in parsed) return { problem: `query: ${parsed.error}` }
  const logic = queryLogic(parsed.query)
  return 'problem' in logic ? { problem: `query: ${logic.problem}` } : logic
}

/** Whether the tool needs a bucketing key for the flag: a split or a progressive rollout in any rule or step. */
function requiresBucketing(flag: Record<string, unknown>): boolean {
  const splits = (rule: unknown) =>
    isJsonObject(rule) &&
    ((isJsonObject(rule.percentage) && Object.keys(rule.percentage).length > 0) || (rule.progressiveRollout ?? null) !== null)
  const inRules = (owner: Record<string, unknown>) =>
    splits(owner.defaultRule) || (Array.isArray(owner.targeting) && owner.targeting.some(splits))
  return (
    inRules(flag) || (Array.isArray(flag.scheduledRollout) && flag.scheduledRollout.some((step) => isJsonObject(step) && inRules(step)))
  )
}

/** The experimentation window as a test of `$flagd.timestamp` (to the second), or why it cannot be one. */
function experimentWindow(raw: unknown): { logic?: unknown } | { problem: string } {
  if (raw === undefined || raw === null) return {}
  if (!isJsonObject(raw)) return { problem: 'experimentation must be {start, end}' }
  const parts: unknown[] = []
  const ts = { var: '$flagd.timestamp' }
  for (const [field, op] of [
    ['start', '>='],
    ['end', '<='],
  ] as const) {
    if (raw[field] === undefined || raw[field] === null) continue
    const ms = dateOf(raw[field])
    if (ms === undefined) return { problem: `experimentation.${field} must be an RFC 3339 date with a zone` }
    parts.push({ [op]: [ts, field === 'start' ? Math.ceil(ms / 1000) : Math.floor(ms / 1000)] })
  }
  if (parts.length === 0) return {}
  return { logic: parts.length === 1 ? parts[0] : { and: parts } }
}
