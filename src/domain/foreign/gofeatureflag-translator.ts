/**
 * Imports from GO Feature Flag (docs/migrations.md#from-go-feature-flag): its flag file (YAML, JSON
 * or TOML, parsed before it comes here), each flag kept with its meaning or skipped with the reason.
 * Due `scheduledRollout` steps are applied; each later one becomes a scheduled change.
 */

import type { FieldProblem } from '../errors.ts'
import { validateDefinition } from '../flag-definition.ts'
import { isJsonObject } from '../json-object.ts'
import { foreignFlagNames } from './foreign-flag-name.ts'
import type { ForeignTranslation, ScheduledImport, Translator } from './foreign-translation.ts'
import { translateFlagState } from './gofeatureflag-flag.ts'
import { applyStep, datedSteps, withTextDates } from './gofeatureflag-schedule.ts'

/** Whether `raw` is GO Feature Flag's flag file: an object of flags by key, each with a `variations` object. */
export function isGoFeatureFlagFile(raw: unknown): boolean {
  if (!isJsonObject(raw)) return false
  const flags = Object.values(raw)
  return flags.length > 0 && flags.every((f) => isJsonObject(f) && isJsonObject(f.variations))
}

/** Translates GO Feature Flag's flag file (see module comment). */
export const translateGoFeatureFlag: Translator = (raw, { nowMs }) => {
  if (!isJsonObject(raw)) return { problems: [{ field: '', reason: 'a GO Feature Flag file is an object of flags by their key' }] }
  const { names, skipped } = foreignFlagNames(Object.keys(raw))
  const out: ForeignTranslation = { flags: {}, segments: {}, skipped: [...skipped], warnings: [], scheduled: [] }
  let shares = false
  let trackEvents = false
  for (const [key, name] of names) {
    const flag = withTextDates(raw[key])
    const made = isJsonObject(flag) ? translateFlag(flag, key, name, nowMs) : { problem: 'is not a flag (an object)' }
    if ('problem' in made) {
      out.skipped.push({ name: key, reason: made.problem })
      continue
    }
    out.flags[name] = made.definition
    out.scheduled.push(...made.scheduled)
    out.warnings.push(...made.warnings)
    shares ||= made.shares
    trackEvents ||= (flag as Record<string, unknown>).trackEvents !== undefined
  }
  if (shares)
    out.warnings.unshift({
      field: 'percentages',
      reason:
        'percentage splits and progressive rollouts keep their sizes, but flagd hashes contexts differently from GO Feature Flag, so which contexts fall in each share changes; a progressive rollout rises in at most 100 steps instead of every second',
    })
  if (trackEvents)
    out.warnings.push({
      field: 'trackEvents',
      reason: 'dropped: flagd counts evaluations itself and exports no evaluation events per flag',
    })
  return out
}

interface TranslatedFlag {
  definition: Record<string, unknown>
  scheduled: ScheduledImport[]
  warnings: FieldProblem[]
  shares: boolean
}

function translateFlag(flag: Record<string, unknown>, key: string, name: string, nowMs: number): TranslatedFlag | { problem: string } {
  const steps = datedSteps(flag)
  if ('problem' in steps) return steps
  let current = flag
  for (const { step } of steps.filter((s) => s.at <= nowMs)) current = applyStep(current, step)
  const base = translateFlagState(current, nowMs)
  if ('problem' in base) return base
  const warnings: FieldProblem[] = []
  const definition = { ...base.definition, ...describe(current, key, name, warnings) }
  const refused = refusal(definition)
  if (refused !== undefined) return { problem: refused }
  let shares = base.shares
  const scheduled: ScheduledImport[] = []
  let before = definition
  for (const { at, step } of steps.filter((s) => s.at > nowMs)) {
    current = applyStep(current, step)
    const later = translateFlagState(current, at)
    const when = new Date(at).toISOString()
    if ('problem' in later) return { problem: `scheduledRollout step of ${when}: ${later.problem}` }
    const after = { ...later.definition, ...describe(current, key, name, []) }
    const laterRefused = refusal(after)
    if (laterRefused !== undefined) return { problem: `scheduledRollout step of ${when}: ${laterRefused}` }
    if (after.type !== before.type) return { problem: `scheduledRollout step of ${when} changes the flag's type` }
    shares ||= later.shares
    scheduled.push({ flag: name, at: when, changes: changesOf(before, after) })
    before = after
  }
  return { definition, scheduled, warnings, shares }
}

/** Why flagd's own validation refuses the translated flag (its first problems), or `undefined`. */
function refusal(definition: Record<string, unknown>): string | undefined {
  const checked = validateDefinition(definition)
  if (checked.ok) return undefined
  return `flagd refuses the translation: ${checked.problems
    .slice(0, 3)
    .map((p) => `${p.field}: ${p.reason}`)
    .join('; ')}`
}

/** The description and metadata: the tool's `metadata` (its `description` as the flag's), `version`, and where the flag came from. */
function describe(flag: Record<string, unknown>, key: string, name: string, warnings: FieldProblem[]): Record<string, unknown> {
  const metadata: Record<string, unknown> = {}
  let description = ''
  const raw = isJsonObject(flag.metadata) ? flag.metadata : {}
  for (const [field, value] of Object.entries(raw)) {
    if (field === 'description' && typeof value === 'string') description = value
    else if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))
      metadata[field] = value
    else
      warnings.push({ field: `flags.${name}.metadata.${field}`, reason: 'dropped: flagd metadata holds text, numbers and booleans only' })
  }
  if (typeof flag.version === 'string' || typeof flag.version === 'number') metadata.version = String(flag.version)
  metadata.originalKey = key
  metadata.importedFrom = 'gofeatureflag'
  return { description, metadata }
}

/** The fields a step changes: each that differs, `null` for a rule or rollout it removes. */
function changesOf(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const changes: Record<string, unknown> = {}
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (field === 'value' && after.valueExists === false) continue
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) changes[field] = after[field] ?? null
  }
  return changes
}
