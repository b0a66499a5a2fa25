/**
 * GO Feature Flag's `scheduledRollout` (docs/migrations.md#from-go-feature-flag): steps, each with a
 * `date`, that patch the flag once their date has come, in date order, as the tool merges them:
 * rules by name (unnamed or new ones appended), the default rule field by field, variations added
 * or replaced, `disable`, `version`, `trackEvents` and the experimentation window replaced.
 */

import { isJsonObject } from '../json-object.ts'
import { dateOf } from './gofeatureflag-outcome.ts'

type Json = Record<string, unknown>

/**
 * `raw` with every date a YAML or TOML reader made (a `Date`, or an instant with
 * `epochMilliseconds`, as Bun's TOML reader gives) written as RFC 3339 text; a local date-time
 * without a zone stays an object, which no date field accepts. Only the objects and lists on the way
 * to a date are copied: where there is none, `raw`'s own parts are the answer (a file of 10,000
 * flags holds few dates, docs/performance.md#imports), so the answer is read, never changed.
 */
export function withTextDates(raw: unknown, depth = 0): unknown {
  if (raw instanceof Date) return Number.isNaN(raw.getTime()) ? null : raw.toISOString()
  if (raw === null || typeof raw !== 'object' || depth > 64) return raw
  if (Array.isArray(raw)) {
    let items: unknown[] | undefined
    for (let i = 0; i < raw.length; i++) {
      const item: unknown = raw[i]
      const read = withTextDates(item, depth + 1)
      if (items === undefined && read !== item) items = raw.slice(0, i)
      items?.push(read)
    }
    return items ?? raw
  }
  const ms = (raw as { epochMilliseconds?: unknown }).epochMilliseconds
  if (typeof ms === 'number' && Number.isFinite(ms)) return new Date(ms).toISOString()
  const prototype = Object.getPrototypeOf(raw)
  if (prototype !== Object.prototype && prototype !== null) return String(raw)
  const object = raw as Json
  const keys = Object.keys(object)
  let values: unknown[] | undefined
  for (let i = 0; i < keys.length; i++) {
    const value = object[keys[i] as string]
    const read = withTextDates(value, depth + 1)
    if (values === undefined && read !== value) values = keys.slice(0, i).map((k) => object[k])
    values?.push(read)
  }
  // a copy holds the same keys as data (a `__proto__` key stays a key), as a plain object
  if (values === undefined && prototype !== null) return raw
  return Object.fromEntries(keys.map((k, i) => [k, values === undefined ? object[k] : values[i]]))
}

/** The steps that have a date, in date order (steps of one date keep the file's order). */
export function datedSteps(flag: Json): { at: number; step: Json }[] | { problem: string } {
  const raw = flag.scheduledRollout
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) return { problem: 'scheduledRollout must be a list of steps' }
  const steps: { at: number; step: Json }[] = []
  for (const [i, step] of raw.entries()) {
    if (!isJsonObject(step)) return { problem: `scheduledRollout[${i}] must be a step` }
    if (step.date === undefined || step.date === null) continue
    const at = dateOf(step.date)
    if (at === undefined) return { problem: `scheduledRollout[${i}].date must be an RFC 3339 date with a zone` }
    steps.push({ at, step })
  }
  return steps.sort((a, b) => a.at - b.at)
}

/**
 * `flag` with `step` applied, as the tool applies a due step: a new object, sharing the parts the
 * step leaves as they were (nothing changes either; a deep copy per step cost more than the step).
 */
export function applyStep(flag: Json, step: Json): Json {
  const next: Json = { ...flag }
  if (Array.isArray(step.targeting)) next.targeting = mergeRules(Array.isArray(next.targeting) ? next.targeting : [], step.targeting)
  for (const field of ['disable', 'trackEvents', 'version'])
    if (step[field] !== undefined && step[field] !== null) next[field] = step[field]
  if (isJsonObject(step.defaultRule)) next.defaultRule = mergeRule(isJsonObject(next.defaultRule) ? next.defaultRule : {}, step.defaultRule)
  if (isJsonObject(step.variations)) next.variations = { ...(isJsonObject(next.variations) ? next.variations : {}), ...step.variations }
  if (isJsonObject(step.experimentation)) {
    const window: Json = isJsonObject(next.experimentation) ? { ...next.experimentation } : {}
    for (const field of ['start', 'end']) if (step.experimentation[field] != null) window[field] = step.experimentation[field]
    next.experimentation = window
  }
  return next
}

function mergeRules(rules: unknown[], updates: unknown[]): unknown[] {
  const named = new Map<string, Json>()
  for (const u of updates) if (isJsonObject(u) && typeof u.name === 'string') named.set(u.name, u)
  const merged: string[] = []
  const out = rules.map((rule) => {
    const name = isJsonObject(rule) && typeof rule.name === 'string' ? rule.name : ''
    const update = named.get(name)
    if (update === undefined || !isJsonObject(rule)) return rule
    merged.push(name)
    return mergeRule(rule, update)
  })
  for (const u of updates) {
    const name = isJsonObject(u) && typeof u.name === 'string' ? u.name : ''
    if (!merged.includes(name)) out.push(u)
  }
  return out
}

function mergeRule(rule: Json, update: Json): Json {
  const next: Json = { ...rule }
  for (const field of ['disable', 'query', 'variation']) if (update[field] != null) next[field] = update[field]
  if (isJsonObject(update.progressiveRollout)) {
    const current = isJsonObject(rule.progressiveRollout) ? rule.progressiveRollout : {}
    const merged: Json = {}
    for (const end of ['initial', 'end']) {
      const before = isJsonObject(current[end]) ? current[end] : {}
      const patch = isJsonObject(update.progressiveRollout[end]) ? update.progressiveRollout[end] : {}
      merged[end] = { ...before, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v != null)) }
    }
    next.progressiveRollout = merged
  }
  if (isJsonObject(update.percentage)) {
    const percentages: Json = isJsonObject(rule.percentage) ? { ...rule.percentage } : {}
    for (const [name, p] of Object.entries(update.percentage)) {
      if (typeof p === 'number' && p < 0) delete percentages[name]
      else percentages[name] = p
    }
    next.percentage = percentages
  }
  return next
}
