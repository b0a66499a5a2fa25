/**
 * The operators of flagd's rule language whose arguments are all evaluated first: comparisons,
 * logic on one value, arithmetic, texts and lists, `missing`, and flagd's `sem_ver`, `starts_with`
 * and `ends_with`. Each takes the evaluated argument list (flagd's rule: a single argument that is
 * not a list stands for a list of one, and one that evaluates to a list is that list).
 */

import {
  affix,
  type Comparison,
  compare,
  concat,
  divide,
  extreme,
  merge,
  minus,
  modulo,
  plus,
  RuleFault,
  substring,
  times,
  truthy,
  within,
} from './json-logic-values.ts'
import { semVer } from './sem-ver.ts'

/** An operator over evaluated arguments; `data` is the current data (for `missing`). */
export type ValueOperator = (args: readonly unknown[], data: unknown) => unknown

/** A path of dots only (the empty one too), which the loop below reads unlike `split`. */
const ONLY_DOTS = /^\.*$/u

/** Splits a `var`/`missing` path: dots separate, a backslash escapes a dot or a backslash. */
export function splitPath(path: string): string[] {
  // most paths have no backslash and a character besides dots: the native split reads them the same,
  // without building each part a character at a time (rules are compiled by the thousand on an import,
  // docs/performance.md#third-round-2026-12-07)
  if (!path.includes('\\') && !ONLY_DOTS.test(path)) return path.split('.')
  const parts: string[] = []
  let current = ''
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as string
    if (c === '\\' && (path[i + 1] === '.' || path[i + 1] === '/' || path[i + 1] === '\\')) {
      current += path[i + 1]
      i++
    } else if (c === '.') {
      parts.push(current)
      current = ''
    } else current += c
  }
  // "." is [""] and ".." is ["", ""], as flagd's evaluator reads them
  if (parts.length !== path.length) parts.push(current)
  return parts
}

/** An own property of an object, list or text (never one inherited from a prototype). */
export function ownValue(holder: unknown, key: string): unknown {
  if (holder === null || holder === undefined) return undefined
  if (typeof holder !== 'object' && typeof holder !== 'string') return undefined
  return Object.hasOwn(holder as object, key) ? (holder as Record<string, unknown>)[key] : undefined
}

function missing(keys: readonly unknown[], data: unknown): unknown[] {
  const out: unknown[] = []
  for (const key of keys) {
    let cur = data
    let found = true
    for (const part of splitPath(String(key))) {
      if (!cur) {
        found = false
        break
      }
      cur = ownValue(cur, part)
      if (cur === undefined) {
        found = false
        break
      }
    }
    if (!found) out.push(key)
  }
  return out
}

function comparison(op: Comparison): ValueOperator {
  return (args) => {
    if (args.length < 2) throw new RuleFault(`${op} needs at least two arguments`)
    let prev = args[0]
    for (let i = 1; i < args.length; i++) {
      if (!compare(op, prev, args[i])) return false
      prev = args[i]
    }
    return true
  }
}

/** Operators by name. */
export const VALUE_OPERATORS: Readonly<Record<string, ValueOperator>> = {
  '==': comparison('=='),
  '===': comparison('==='),
  '!=': comparison('!='),
  '!==': comparison('!=='),
  '<': comparison('<'),
  '<=': comparison('<='),
  '>': comparison('>'),
  '>=': comparison('>='),
  '!': (args) => !truthy(args[0]),
  '!!': (args) => truthy(args[0]),
  '+': plus,
  '-': minus,
  '*': times,
  '/': divide,
  '%': modulo,
  max: (args) => extreme(args, true),
  min: (args) => extreme(args, false),
  in: (args) => within(args[0], args[1]),
  cat: concat,
  substr: substring,
  merge,
  missing: (args, data) => missing(args, data),
  missing_some: (args, data) => {
    const [need, options] = args
    if (!Array.isArray(options)) throw new RuleFault('missing_some needs [count, [keys]]')
    const absent = missing(options, data)
    return options.length - absent.length >= (need as number) ? [] : absent
  },
  sem_ver: semVer,
  starts_with: (args) => affix(args, true),
  ends_with: (args) => affix(args, false),
}
