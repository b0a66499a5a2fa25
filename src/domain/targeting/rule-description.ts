/**
 * Rules in words, for "why this value" (docs/targeting.md#rules) and the web UI: the common shapes a person
 * writes (comparisons of an attribute with a value, membership, texts, versions, segments, logic)
 * read as sentences (`email ends with "@example.com"`, `version ≥ 2.1.0`); anything else is shown
 * as its JSON, never guessed at.
 */

import type { TraceStep } from './rule-evaluation.ts'

const SHORT = 80
const show = (v: unknown): string => {
  const text = JSON.stringify(v) ?? String(v)
  return text.length > SHORT ? `${text.slice(0, SHORT - 1)}…` : text
}

/** An operand in words: an attribute by its path, a value as JSON. */
function operand(node: unknown): string {
  if (node !== null && typeof node === 'object' && !Array.isArray(node)) {
    const keys = Object.keys(node)
    if (keys.length === 1 && keys[0] === 'var') {
      const v = (node as { var: unknown }).var
      const path = Array.isArray(v) ? v[0] : v
      if (path === '$flagd.timestamp') return 'the time (unix seconds)'
      if (path === '$flagd.flagKey') return 'the flag key'
      return typeof path === 'string' && path !== '' ? path : 'the context'
    }
    return describeRule(node)
  }
  return show(node)
}

const COMPARISONS: Record<string, string> = {
  '==': 'is',
  '===': 'is exactly',
  '!=': 'is not',
  '!==': 'is not exactly',
  '<': '<',
  '<=': '≤',
  '>': '>',
  '>=': '≥',
}
const SEMVER: Record<string, string> = {
  '=': '=',
  '!=': '≠',
  '<': '<',
  '<=': '≤',
  '>': '>',
  '>=': '≥',
  '^': 'has the same major version as',
  '~': 'has the same major and minor version as',
}

/** A rule (or part of one) in words. */
export function describeRule(node: unknown): string {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return show(node)
  const keys = Object.keys(node)
  if (keys.length !== 1) return show(node)
  const op = keys[0] as string
  const raw = (node as Record<string, unknown>)[op]
  const args = Array.isArray(raw) ? raw : [raw]
  // an own entry only: a rule's operator named toString is no comparison
  if (Object.hasOwn(COMPARISONS, op)) {
    if (args.length === 3 && (op === '<' || op === '<='))
      return `${operand(args[1])} is between ${operand(args[0])} and ${operand(args[2])}${op === '<' ? ' (exclusive)' : ''}`
    if (args.length === 2) return `${operand(args[0])} ${COMPARISONS[op]} ${operand(args[1])}`
  }
  switch (op) {
    case '$ref':
      return `in segment ${String(raw)}`
    case 'in':
      if (args.length === 2) {
        if (Array.isArray(args[1])) return `${operand(args[0])} is one of ${(args[1] as unknown[]).map(show).join(', ')}`
        return `${operand(args[1])} contains ${operand(args[0])}`
      }
      break
    case 'starts_with':
    case 'ends_with':
      if (args.length === 2) return `${operand(args[0])} ${op === 'starts_with' ? 'starts' : 'ends'} with ${operand(args[1])}`
      break
    case 'sem_ver':
      if (args.length === 3 && typeof args[1] === 'string' && Object.hasOwn(SEMVER, args[1]))
        return `${operand(args[0])} ${SEMVER[args[1]]} ${operand(args[2])} (semantic version)`
      break
    case '!':
      return `not (${describeRule(args[0])})`
    case '!!':
      return `${operand(args[0])} is set`
    case 'and':
    case 'or':
      return args.map((a) => (isLogic(a) ? `(${describeRule(a)})` : describeRule(a))).join(op === 'and' ? ' and ' : ' or ')
    case 'missing':
      return `${args.map(show).join(', ')} ${args.length === 1 ? 'is' : 'are'} missing`
    case 'var':
      return `${operand(node)} is truthy`
    case 'fractional':
      return 'a percentage split'
  }
  return show(node)
}

const isLogic = (n: unknown) => n !== null && typeof n === 'object' && ('and' in n || 'or' in n)

/** What a required flag answered, in words. */
function answeredInWords(a: { value?: unknown; variant?: string; reason?: string; errorCode?: string }): string {
  if (Object.keys(a).length === 0) return 'what this caller may not see (the flag is outside its flagPrefixes)'
  if (a.errorCode === 'FLAG_NOT_FOUND') return 'nothing (no such flag is served)'
  if (a.errorCode !== undefined) return `an error (${a.errorCode})`
  if (a.reason === 'DISABLED') return 'nothing (it is disabled)'
  if (a.value === undefined) return 'no value (it has no default)'
  return `${JSON.stringify(a.value)}${a.variant !== undefined ? ` (variant ${a.variant})` : ''}`
}

/** One trace step in words. */
export function describeStep(step: TraceStep): string {
  switch (step.kind) {
    case 'condition':
      return `${step.path}: ${describeRule(step.rule)}: ${step.result ? 'yes' : 'no'}`
    case 'segment':
      return `segment ${step.name} ${step.matched ? 'matched' : 'did not match'}`
    case 'fractional': {
      const percent = step.total === 0 ? 0 : (step.bucket / step.total) * 100
      return `${step.path}: ${JSON.stringify(step.bucketKey)} falls in bucket ${step.bucket} of ${step.total} (${percent.toFixed(1)} %) → ${show(step.variant)}`
    }
    case 'fractional-skipped':
      return `${step.path}: no split: ${step.reason}`
    case 'rollout':
      if (step.paused)
        return `rollout paused by its guard at ${step.percent} % (step ${step.step} of ${step.steps}): ${show(step.variant)} for that share of contexts, the rule below for the rest`
      return `rollout at ${step.percent} % (step ${step.step} of ${step.steps}): ${show(step.variant)} for that share of contexts, the rule below for the rest`
    case 'prerequisite':
      return `requires ${step.flag} to be ${step.variants.map(show).join(' or ')}: it answered ${answeredInWords(step.answered)}, ${step.holds ? 'held' : 'not held, so the default is served'}`
  }
}
