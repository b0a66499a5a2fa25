/**
 * A flag's targeting in words for its page and the flag list (docs/ui.md): "if email ends with
 * "@example.com" → on; otherwise 20 % on, 80 % off, sticky by user". Conditions are worded by the
 * same code as the service's "why this value" trace; a rule the builder cannot show is worded as
 * far as it can be, never guessed at.
 */

import { describeRule, describeStep } from '../../domain/targeting/rule-description.ts'
import type { TraceStep } from '../../domain/targeting/rule-evaluation.ts'
import { conditionsRule, readTargeting, type Split } from './rule-model.ts'

/** Each variant's share of a split, in percent. */
export function shares(split: Split): { variant: string; percent: number }[] {
  const total = split.weights.reduce((n, w) => n + Math.max(0, w.weight), 0)
  return split.weights.map((w) => ({ variant: w.variant, percent: total === 0 ? 0 : (Math.max(0, w.weight) * 100) / total }))
}

/** A share as people read it: "20 %", "31.6 %". */
export const percentText = (p: number) => `${Number.isInteger(p) ? p : p.toFixed(1)} %`
const percent = percentText

/** A split in words: "20 % on, 80 % off, sticky by targetingKey". */
export function splitInWords(split: Split): string {
  const parts = shares(split)
    .filter((s) => s.percent > 0)
    .map((s) => `${percent(s.percent)} ${s.variant}`)
  return `${parts.join(', ') || 'nobody'}, sticky by ${split.by || 'targetingKey'}`
}

/** The lines of a flag's targeting in words; `[]` when it has none. */
export function targetingInWords(rule: unknown): string[] {
  if (rule === null || rule === undefined) return []
  const model = readTargeting(rule)
  if (!model) return [`a rule written as JSON: ${describeRule(rule)}`]
  const lines = model.rules.map((r) => `if ${describeRule(conditionsRule(r.conditions))} → ${r.serve}`)
  const lead = lines.length > 0 ? 'otherwise ' : ''
  if (model.split) {
    lines.push(`${lead}${splitInWords(model.split)}`)
    if (model.fallback !== '') lines.push(`without a ${model.split.by || 'targetingKey'} → ${model.fallback}`)
  } else if (model.fallback !== '') lines.push(`${lead}${model.fallback}`)
  else if (lines.length > 0) lines.push("otherwise the flag's own value")
  return lines
}

/** One line for the flag list: "20 % · 2 rules", "1 rule", "custom rule", or '' for none. */
export function targetingSummary(rule: unknown): string {
  if (rule === null || rule === undefined) return ''
  const model = readTargeting(rule)
  if (!model) return 'custom rule'
  const parts: string[] = []
  if (model.split) {
    const first = shares(model.split).find((s) => s.percent > 0 && s.percent < 100)
    parts.push(first ? `${percent(first.percent)} ${first.variant}` : 'split')
  }
  if (model.rules.length > 0) parts.push(`${model.rules.length} rule${model.rules.length === 1 ? '' : 's'}`)
  if (parts.length === 0) parts.push(`always ${model.fallback}`)
  return parts.join(' · ')
}

/**
 * One step of "why this value" in the builder's words where the step is one of its rows ("Rule 2:
 * country is one of "DE", "FR": no", "Split: …"), else the service's wording.
 */
export function stepInWords(step: TraceStep & { text?: string }): string {
  if (step.kind === 'condition') {
    const rule = /^targeting\.if\[(\d+)\]$/.exec(step.path)
    if (rule && Number(rule[1]) % 2 === 0)
      return `Rule ${Number(rule[1]) / 2 + 1}: ${describeRule(step.rule)}: ${step.result ? 'matched' : 'not matched'}`
  }
  if (step.kind === 'fractional' && /^targeting(\.if\[\d+\])?(\.or\[0\])?\.fractional$/.test(step.path)) {
    const percent = step.total === 0 ? 0 : (step.bucket / step.total) * 100
    return `Split: bucket ${step.bucket} of ${step.total} (${percent.toFixed(1)} %) → ${String(step.variant)}`
  }
  return step.text ?? describeStep(step)
}
