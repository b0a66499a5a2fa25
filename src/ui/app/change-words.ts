/**
 * A proposed change of one environment's state of a flag in words, for the `Review changes` dialog
 * (docs/ui.md#review-before-protected-changes): "value false → true", "enabled true → false",
 * "split true 10 % → 20 %", rules and rollouts in words.
 */

import { countOf } from './count-words.ts'
import { fieldWord } from './field-words.ts'
import { localTime } from './local-time.ts'
import { rolloutInWords } from './rollout-words.ts'
import { readTargeting } from './rule-model.ts'
import { shares, targetingInWords } from './rule-words.ts'

const percent = (p: number) => `${Number.isInteger(p) ? p : Number(p.toFixed(1))} %`
const json = (v: unknown) => (v === undefined || v === null ? 'none' : JSON.stringify(v))
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

/** Targeting that moves only a split's shares, as "split <variant> a % → b %" per variant; otherwise `null`. */
function splitMoves(before: unknown, after: unknown): string[] | null {
  const [a, b] = [readTargeting(before), readTargeting(after)]
  if (!a?.split || !b?.split) return null
  if (!same(a.rules, b.rules) || a.fallback !== b.fallback || (a.split.by || '') !== (b.split.by || '')) return null
  const was = new Map(shares(a.split).map((s) => [s.variant, s.percent]))
  const now = new Map(shares(b.split).map((s) => [s.variant, s.percent]))
  const variants = [...new Set([...was.keys(), ...now.keys()])]
  return variants
    .filter((v) => (was.get(v) ?? 0) !== (now.get(v) ?? 0))
    .map((v) => `split ${v} ${percent(was.get(v) ?? 0)} → ${percent(now.get(v) ?? 0)}`)
}

const rules = (rule: unknown) => {
  const words = targetingInWords(rule)
  return words.length === 0 ? 'none' : `(${words.join('; ')})`
}

/**
 * The lines saying what setting `set` on a flag whose state is `before` changes; fields that stay
 * the same say nothing. Times are written by `time` (the reader's own, by default).
 */
export function changeInWords(
  before: Record<string, unknown>,
  set: Record<string, unknown>,
  time: (iso: string) => string = localTime,
): string[] {
  const lines: string[] = []
  for (const [field, after] of Object.entries(set)) {
    const was = before[field]
    if (same(was, after)) continue
    if (field === 'valueExists') {
      if (after === false) lines.push('value removed: applications get the default value')
      continue
    }
    if (field === 'targeting') lines.push(...(splitMoves(was, after) ?? [`rules ${rules(was)} → ${rules(after)}`]))
    else if (field === 'rollout') lines.push(`rollout ${rolloutInWords(was, time)} → ${rolloutInWords(after, time)}`)
    else if (field === 'chancePercentB') lines.push(`split B ${percent(Number(was ?? 50))} → ${percent(Number(after ?? 50))}`)
    else lines.push(`${fieldWord(field)} ${json(was)} → ${json(after)}`)
  }
  return lines.length > 0 ? lines : ['no change to what it serves']
}

/**
 * The line under `Review changes` saying why the write becomes a request and what applies it, its
 * verb agreeing with the count ("once 1 approval agrees", "once 2 approvals agree"; docs/ui.md#times).
 */
export function protectionInWords(environment: string, approvals: number): string {
  const applied = approvals > 0 ? `, applied once ${countOf(approvals, 'approval agrees', 'approvals agree')}` : ''
  return `${environment} is protected: a change there is a change request${applied}.`
}
