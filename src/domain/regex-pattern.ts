/**
 * User-supplied patterns, compiled and run with re2js (RE2 semantics, linear time). The platform's
 * RegExp must never see a user's pattern: a catastrophic one blocks the event loop. Compiled
 * patterns are cached (bounded), since the same few patterns are checked again and again.
 *
 * Linear is not enough on its own: RE2's matcher costs about (program size × value length) steps, and
 * a legal 965-character pattern compiles to 16,003 instructions, which took 25 s against a
 * 65,536-character value. So a pattern may compile to at most `PROGRAM_MAX` instructions, and every
 * check draws that cost from a `CheckBudget` shared by everything one request, document or dropped
 * file checks. A check that does not fit the budget is refused as too slow to check, so no request
 * keeps the service from answering others for more than a fraction of a second (measured in
 * `bun run bench`).
 */

import type { RE2JS } from 're2js'
import { BoundedMap } from './bounded-map.ts'

export const PATTERN_MAX = 1000
/** The largest compiled program accepted (RE2 instructions). */
export const PROGRAM_MAX = 2000
/** Matching steps one request, document or file may spend on pattern checks (about 0.4 s here). */
export const CHECK_BUDGET_STEPS = 16_000_000
const CACHE_MAX = 1000

/**
 * re2js, loaded at the first pattern compiled rather than at start (most daemons hold no pattern
 * and loading it costs resident memory); the JSON Schema checks use it too.
 */
let loaded: typeof RE2JS | undefined
export const re2 = (): typeof RE2JS => (loaded ??= (require('re2js') as { RE2JS: typeof RE2JS }).RE2JS)
const cache = new BoundedMap<string, RE2JS>(CACHE_MAX)

/** What the pattern checks of one request, document or file may still spend, in matching steps. */
export interface CheckBudget {
  remaining: number
}

/** A fresh budget for one request, document or file. */
export function newCheckBudget(steps = CHECK_BUDGET_STEPS): CheckBudget {
  return { remaining: steps }
}

/** Matching steps charged per compiled instruction: compiling costs about that much (38 ms for 16,003). */
const COMPILE_STEPS_PER_INSTRUCTION = 100

/**
 * Compiles `pattern`, or returns the reason it cannot be used. Compiling a large pattern takes tens
 * of milliseconds, so compiling a new one is charged to `budget` too (by its program size): a
 * document of many distinct costly patterns runs out of budget instead of stalling the service.
 */
export function compilePattern(pattern: string, budget?: CheckBudget): RE2JS | string {
  const cached = cache.get(pattern)
  if (cached) return cached
  if (budget && budget.remaining <= 0) return 'cannot be checked: this request holds too many costly patterns to check quickly'
  let compiled: RE2JS
  try {
    compiled = re2().compile(pattern)
  } catch (err) {
    if (budget) budget.remaining -= pattern.length * COMPILE_STEPS_PER_INSTRUCTION
    return `is not a valid RE2 pattern (${(err as Error).message.replace(/^error parsing regexp: /, '')})`
  }
  if (budget) budget.remaining -= compiled.programSize() * COMPILE_STEPS_PER_INSTRUCTION
  if (compiled.programSize() > PROGRAM_MAX) {
    return `is too large to check quickly: it compiles to ${compiled.programSize()} instructions, at most ${PROGRAM_MAX} are allowed (use smaller repetition counts)`
  }
  cache.set(pattern, compiled)
  return compiled
}

/**
 * Whether `value` contains a match of the compiled pattern (unanchored, like JSON Schema), or a
 * reason it cannot be checked within `budget` (which the check draws from).
 */
export function patternMatches(compiled: RE2JS, value: string, budget: CheckBudget): boolean | string {
  const cost = compiled.programSize() * (value.length + 1)
  if (cost > budget.remaining) {
    return `cannot be checked against regexPattern quickly enough (a pattern of ${compiled.programSize()} instructions against ${value.length} characters); shorten the value or simplify the pattern`
  }
  budget.remaining -= cost
  return compiled.matcher(value).find()
}
