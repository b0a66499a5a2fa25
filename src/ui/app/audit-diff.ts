/** Audit entries as the UI shows them (docs/api.md#audit-log): one line saying what changed. */

import { localTime } from './local-time.ts'
import { rolloutInWords } from './rollout-words.ts'
import { targetingInWords } from './rule-words.ts'

/** An audit entry as the UI reads it. */
export type Entry = {
  id: number
  at: string
  actor: { type: string; id: string; name: string }
  source: string
  action: string
  target: { type: string; id?: string; name?: string }
  revision?: number
  /** The environment a change of per-environment state was made in; null for shared fields. */
  environment?: string | null
  before: Record<string, unknown> | null
  after: Record<string, unknown> | null
}

const BOOKKEEPING = new Set(['updatedAt', 'revision', 'createdAt', 'lastUsedAt'])

/** "value false → true; description "" → "x"", or "created" / "deleted"; rules and rollouts in words, times as `time` writes them. */
export function describeChange(e: Entry, time: (iso: string) => string = localTime): string {
  if (!e.before || !e.after) return e.after ? 'created' : 'deleted'
  const keys = [...new Set([...Object.keys(e.before), ...Object.keys(e.after)])].filter(
    (k) => !BOOKKEEPING.has(k) && JSON.stringify(e.before?.[k]) !== JSON.stringify(e.after?.[k]),
  )
  const shown = (k: string, v: unknown) => fieldInWords(k, v, time)
  return keys.map((k) => `${k} ${shown(k, e.before?.[k])} → ${shown(k, e.after?.[k])}`).join('; ') || 'no change'
}

/** One field's value in words: a rollout or a rule as a sentence, anything else as JSON ("–" for none). */
export function fieldInWords(field: string, v: unknown, time: (iso: string) => string = localTime): string {
  if (field === 'rollout') return rolloutInWords(v, time)
  if (field !== 'targeting') return JSON.stringify(v) ?? '–'
  const words = targetingInWords(v)
  return words.length === 0 ? 'none' : `(${words.join('; ')})`
}
