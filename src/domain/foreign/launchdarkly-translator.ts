/**
 * Imports from LaunchDarkly (docs/migrations.md#from-launchdarkly): its flag data as the SDKs read
 * it, or its REST API's flag list in one environment, translated flag by flag into flagd's rule
 * language with the meaning kept; a flag that cannot be carried exactly is skipped with the reason,
 * and so is every flag that requires it.
 */

import type { FieldProblem } from '../errors.ts'
import { validateDefinition } from '../flag-definition.ts'
import { segmentRuleProblems } from '../flag-targeting-fields.ts'
import { PREREQUISITE_CHAIN_MAX, PREREQUISITES_MAX } from '../prerequisite.ts'
import { foreignFlagNames } from './foreign-flag-name.ts'
import type { ForeignTranslation, SkippedFlag, Translator } from './foreign-translation.ts'
import { Unkept } from './launchdarkly-clause.ts'
import { type LdTranslated, translateLdFlag } from './launchdarkly-flag.ts'
import { isSampledSegment, translateLdSegments } from './launchdarkly-segment.ts'
import { isLdShape, type LdFlag, readLdSource } from './launchdarkly-source.ts'

/** True when `raw` is a LaunchDarkly file (its SDK flag data or its REST flag list). */
export function isLaunchdarklyFile(raw: unknown): boolean {
  return isLdShape(raw)
}

const PERCENTAGES: FieldProblem = {
  field: 'percentages',
  reason:
    'percentage rollouts keep their weights exactly, but flagd hashes contexts differently from LaunchDarkly: each bucket keeps its size, not its members',
}

/** A LaunchDarkly file translated (see module comment). */
export const translateLaunchdarkly: Translator = (raw, options) => {
  const source = readLdSource(raw, options.sourceEnvironment)
  if ('problems' in source) return source
  const skipped: SkippedFlag[] = [...source.missing]
  const warnings: FieldProblem[] = [...source.warnings]
  const segments: ForeignTranslation['segments'] = {}
  const segmentResults = translateLdSegments(source.segments)
  for (const [key, r] of segmentResults)
    if ('rule' in r) segments[key] = { description: r.description, rule: r.rule }
    else warnings.push({ field: `segments.${key}`, reason: `not carried: ${r.reason}` })
  // a segment flagd refuses is not carried, nor those that use it
  for (let changed = true; changed; ) {
    changed = false
    const rules = new Map(Object.entries(segments).map(([k, v]) => [k, v.rule]))
    for (const [key, seg] of Object.entries(segments)) {
      const problems = segmentRuleProblems(key, seg.rule, rules)
      if (problems.length === 0) continue
      delete segments[key]
      warnings.push({ field: `segments.${key}`, reason: `not carried: flagd refuses it: ${problems.map((p) => p.reason).join('; ')}` })
      changed = true
      break
    }
  }
  const segmentRules = new Map(Object.entries(segments).map(([k, v]) => [k, v.rule]))
  const segmentName = (key: string) => (segmentRules.has(key) ? key : source.segments.has(key) ? undefined : null)

  const live: LdFlag[] = []
  for (const f of source.flags)
    if (f.deleted === true) skipped.push({ name: f.key, reason: 'deleted or archived in LaunchDarkly' })
    else live.push(f)
  const naming = foreignFlagNames(live.map((f) => f.key))
  skipped.push(...naming.skipped)
  const byKey = new Map(live.map((f) => [f.key, f]))
  const done = new Map<string, LdTranslated>()
  for (const f of live) {
    const name = naming.names.get(f.key)
    if (name === undefined) continue
    try {
      const t = translateLdFlag(f, name, segmentName)
      const valid = validateDefinition(t.definition, { segments: segmentRules })
      if (!valid.ok) throw new Unkept(`flagd refuses it: ${valid.problems.map((p) => `${p.field} ${p.reason}`).join('; ')}`)
      done.set(f.key, t)
    } catch (e) {
      if (!(e instanceof Unkept)) throw e
      skipped.push({ name: f.key, reason: e.message })
    }
  }
  resolvePrerequisites(done, byKey, naming.names, skipped)

  const flags: ForeignTranslation['flags'] = {}
  let percentages = false
  for (const f of live) {
    const t = done.get(f.key)
    if (t === undefined) continue
    const name = naming.names.get(f.key) as string
    flags[name] = t.definition
    for (const note of t.notes) warnings.push({ field: `flags.${name}.${note.field}`, reason: note.reason })
    percentages ||= t.percentages
  }
  // a segment that samples its matches splits too, for the flags that use it
  const sampledSegments = [...source.segments].filter(([key, s]) => key in segments && isSampledSegment(s)).map(([key]) => key)
  const usesSampled = (rule: unknown) =>
    sampledSegments.some((key) => JSON.stringify(rule ?? null).includes(`{"$ref":${JSON.stringify(key)}}`))
  percentages ||=
    sampledSegments.length > 0 &&
    (Object.values(flags).some((f) => usesSampled(f.targeting)) || Object.values(segments).some((s) => usesSampled(s.rule)))
  if (percentages) warnings.push(PERCENTAGES)
  return {
    flags,
    segments,
    skipped,
    warnings,
    scheduled: [],
    ...(source.environment !== undefined ? { environment: source.environment } : {}),
  }
}

/** Why LaunchDarkly's prerequisite `p` of a flag cannot be a prerequisite of flagd, or `undefined` when it can. */
function prerequisiteProblem(
  p: { key: string; variation: number },
  done: Map<string, LdTranslated>,
  byKey: Map<string, LdFlag>,
): string | undefined {
  const target = byKey.get(p.key)
  const t = done.get(p.key)
  if (target === undefined) return `its prerequisite ${p.key} is not in the file`
  if (t === undefined) return `its prerequisite ${p.key} is not carried (see its own reason)`
  const required = target.variations[p.variation]
  if (!Number.isInteger(p.variation) || p.variation < 0 || p.variation >= target.variations.length)
    return `its prerequisite ${p.key} has no variation ${p.variation}`
  // flagd's prerequisites compare values, LaunchDarkly's variations: the same only when no other variation holds that value
  if (target.variations.some((v, i) => i !== p.variation && JSON.stringify(v) === JSON.stringify(required)))
    return `its prerequisite ${p.key} has two variations of the value it requires, which flagd's prerequisites cannot tell apart`
  if (!target.on && target.offVariation === p.variation)
    return `its prerequisite ${p.key} is off and serves the required variation: LaunchDarkly never counts an off prerequisite, flagd would`
  return undefined
}

/** Sets each flag's prerequisites to flagd's, skipping (until nothing more changes) those whose prerequisites are not carried. */
function resolvePrerequisites(
  done: Map<string, LdTranslated>,
  byKey: Map<string, LdFlag>,
  names: Map<string, string>,
  skipped: SkippedFlag[],
): void {
  const drop = (key: string, reason: string) => {
    done.delete(key)
    skipped.push({ name: key, reason })
  }
  for (let changed = true; changed; ) {
    changed = false
    for (const [key, t] of done) {
      if (t.prerequisites.length === 0) continue
      const problem =
        t.prerequisites.length > PREREQUISITES_MAX
          ? `it has ${t.prerequisites.length} prerequisites, flagd takes at most ${PREREQUISITES_MAX}`
          : t.prerequisites.map((p) => prerequisiteProblem(p, done, byKey)).find((r) => r !== undefined)
      if (problem !== undefined) {
        drop(key, problem)
        changed = true
      }
    }
  }
  const depth = new Map<string, number>()
  const depthOf = (key: string, seen: string[]): number => {
    if (seen.includes(key)) return Number.POSITIVE_INFINITY
    const known = depth.get(key)
    if (known !== undefined) return known
    const t = done.get(key)
    const d = t === undefined ? 0 : Math.max(0, ...t.prerequisites.map((p) => 1 + depthOf(p.key, [...seen, key])))
    depth.set(key, d)
    return d
  }
  for (const key of [...done.keys()])
    if (depthOf(key, []) > PREREQUISITE_CHAIN_MAX)
      drop(key, `its chain of prerequisites is longer than ${PREREQUISITE_CHAIN_MAX} links, or a cycle`)
  for (const t of done.values())
    if (t.prerequisites.length > 0)
      t.definition.prerequisites = t.prerequisites.map((p) => {
        const target = done.get(p.key)
        return { flag: names.get(p.key) as string, variants: [target?.variants.names[p.variation] as string] }
      })
  // a flag whose prerequisite was dropped for its chain is dropped too
  for (const [key, t] of [...done])
    if (t.prerequisites.some((p) => !done.has(p.key))) drop(key, 'a prerequisite in its chain is not carried (see its reason)')
}
