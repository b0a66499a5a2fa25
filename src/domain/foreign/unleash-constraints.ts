/**
 * Unleash's constraints in flagd's rule language (docs/migrations.md#from-unleash), each operator
 * with the meaning Unleash's SDKs give it: values trimmed and empty ones dropped, a missing context
 * field never matching (so `inverted` matches it), numbers compared only when the field holds one,
 * versions only when both sides are full semantic versions, `DATE_*` comparing the time of the
 * evaluation (`$flagd.timestamp`). What cannot be kept exactly comes back as the reason.
 */

import { parseStrictVersion } from '../targeting/sem-ver.ts'
import type { UnleashConstraint } from './unleash-export.ts'

/** A rule of flagd's language, or why the Unleash construct cannot become one. */
export type Translated = { rule: unknown } | { reason: string }

/** Names no rule may read (docs/api.md). */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype'])

/** Unleash's names of the context fields the OFREP context carries under other names. */
const RENAMED: Record<string, string> = { userId: 'targetingKey' }

/** The `var` of Unleash's context field `name` (its user id is `targetingKey`), or why none reads it exactly. */
export function contextVar(name: string): { var: string } | { reason: string } {
  if (name === '') return { reason: 'a constraint names no context field' }
  // flagd's `var` reads a dotted name as a path into nested objects
  if (name.includes('.')) return { reason: `the context field ${name} has a dot, which flagd reads as a path` }
  if (RESERVED.has(name)) return { reason: `the context field ${name} is a name flagd's rules refuse` }
  return { var: RENAMED[name] ?? name }
}

/** The values a constraint compares with, as Unleash cleans them: empty ones dropped, the others trimmed. */
function cleanValues(values: unknown[] | undefined): string[] {
  return (values ?? []).filter((v): v is string => typeof v === 'string' && v !== '').map((v) => v.trim())
}

const anyOf = (rules: unknown[]): unknown => (rules.length === 0 ? false : rules.length === 1 ? rules[0] : { or: rules })
const present = (v: unknown) => ({ '!=': [v, null] })

/** One constraint as a rule (see module comment). */
export function constraintRule(c: UnleashConstraint): Translated {
  const at = `constraint ${c.contextName} ${c.operator}`
  const base = baseRule(c)
  if ('reason' in base) return { reason: `${at}: ${base.reason}` }
  return c.inverted === true ? { rule: { '!': [base.rule] } } : base
}

function baseRule(c: UnleashConstraint): Translated {
  const op = c.operator
  if (op === 'DATE_AFTER' || op === 'DATE_BEFORE') return dateRule(c)
  const v = contextVar(c.contextName)
  if ('reason' in v) return v
  switch (op) {
    case 'IN':
    case 'NOT_IN': {
      const isIn = { in: [v, cleanValues(c.values)] }
      return { rule: op === 'IN' ? isIn : { '!': [isIn] } }
    }
    case 'STR_CONTAINS':
    case 'STR_STARTS_WITH':
    case 'STR_ENDS_WITH': {
      if (c.caseInsensitive === true) return { reason: "is case-insensitive, which flagd's rule language cannot express for every text" }
      const values = cleanValues(c.values)
      if (op === 'STR_CONTAINS') return { rule: anyOf(values.map((x) => ({ in: [x, v] }))) }
      const fn = op === 'STR_STARTS_WITH' ? 'starts_with' : 'ends_with'
      return { rule: anyOf(values.map((x) => ({ [fn]: [v, x] }))) }
    }
    case 'NUM_EQ':
    case 'NUM_GT':
    case 'NUM_GTE':
    case 'NUM_LT':
    case 'NUM_LTE': {
      const n = Number(c.value)
      if (c.value === undefined || c.value === null || Number.isNaN(n)) return { rule: false } // Unleash: never matches
      const cmp = { NUM_EQ: '==', NUM_GT: '>', NUM_GTE: '>=', NUM_LT: '<', NUM_LTE: '<=' }[op]
      return { rule: { and: [present(v), { [cmp]: [v, n] }] } }
    }
    case 'SEMVER_EQ':
    case 'SEMVER_GT':
    case 'SEMVER_LT': {
      const version = typeof c.value === 'string' ? c.value : undefined
      if (version === undefined || parseStrictVersion(version) === undefined) return { rule: false } // Unleash: never matches
      const cmp = { SEMVER_EQ: '=', SEMVER_GT: '>', SEMVER_LT: '<' }[op]
      return { rule: { sem_ver: [v, cmp, version] } }
    }
    default:
      return { reason: 'is not an operator of Unleash 5' }
  }
}

/**
 * `DATE_AFTER`/`DATE_BEFORE` against the time of the evaluation, to the second (`$flagd.timestamp`
 * counts whole seconds): after a date means from its second on, before it up to that second.
 */
function dateRule(c: UnleashConstraint): Translated {
  if (c.contextName !== 'currentTime')
    return { reason: `compares ${c.contextName}, a date given as text in the context, which flagd's rules cannot compare` }
  const ms = typeof c.value === 'string' || typeof c.value === 'number' ? new Date(c.value).getTime() : Number.NaN
  if (Number.isNaN(ms)) return { rule: false } // Unleash: an invalid date never compares true
  const second = Math.ceil(ms / 1000)
  const now = { var: '$flagd.timestamp' }
  return { rule: c.operator === 'DATE_AFTER' ? { '>=': [now, second] } : { '<': [now, second] } }
}
