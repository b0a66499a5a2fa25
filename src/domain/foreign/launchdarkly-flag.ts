/**
 * One LaunchDarkly flag as a flag of a migration file (docs/migrations.md#from-launchdarkly).
 * LaunchDarkly serves, in order: the off variation when the flag is off or a prerequisite fails,
 * the variation of an individual target, of the first rule that matches, else the fallthrough.
 * The off variation becomes the flag's `value` (what flagd serves when a prerequisite fails); the
 * rest becomes one `if` chain. A flag off without an off variation is imported disabled (the
 * application's default), its rules kept for when it is enabled.
 */

import { TAGS_MAX, tagProblem } from '../flag-lifecycle.ts'
import { attributePath, clausesCondition, type SegmentNames, Unkept } from './launchdarkly-clause.ts'
import type { LdFlag } from './launchdarkly-source.ts'
import { type LdVariants, ldVariants } from './launchdarkly-variations.ts'

/** An LD prerequisite: the flag's key and the variation index it must serve. */
export interface LdPrerequisite {
  key: string
  variation: number
}

/** A flag translated, before its prerequisites are resolved to flag names. */
export interface LdTranslated {
  definition: Record<string, unknown>
  variants: LdVariants
  prerequisites: LdPrerequisite[]
  /** What the flag leaves behind, each `field` relative to the flag (`tags`). */
  notes: { field: string; reason: string }[]
  /** True when a percentage split was carried. */
  percentages: boolean
}

/** The total weight of a LaunchDarkly rollout: its weights are per 100,000. */
const TOTAL = 100_000

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function variationName(v: LdVariants, index: unknown, what: string): string {
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= v.names.length)
    throw new Unkept(`${what} names variation ${JSON.stringify(index)}, which the flag does not have`)
  return v.names[index] as string
}

/** The shares per 100,000 of a rollout, as LaunchDarkly's buckets give them (the rest beyond the weights goes to the last). */
function shares(v: LdVariants, entries: unknown[], what: string): [string, number][] {
  const out = new Map<string, number>()
  let sum = 0
  entries.forEach((e, i) => {
    const entry = isObject(e) ? e : {}
    const weight = entry.weight
    if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 0)
      throw new Unkept(`${what} has a weight that is not a whole number of 1/100,000 (${JSON.stringify(weight)})`)
    const name = variationName(v, entry.variation, what)
    const end = Math.min(TOTAL, sum + weight) + (i === entries.length - 1 ? TOTAL - Math.min(TOTAL, sum + weight) : 0)
    out.set(name, (out.get(name) ?? 0) + end - Math.min(TOTAL, sum))
    sum += weight
  })
  return [...out].filter(([, w]) => w > 0)
}

/** What a fallthrough or rule serves: a variant name, or a percentage split; `percent` is told when a split is carried. */
function served(flagName: string, v: LdVariants, vr: unknown, what: string, percent: () => void): unknown {
  if (!isObject(vr)) throw new Unkept(`${what} serves nothing`)
  if (vr.variation !== undefined && vr.variation !== null) return variationName(v, vr.variation, what)
  const rollout = vr.rollout
  if (!isObject(rollout) || !Array.isArray(rollout.variations) || rollout.variations.length === 0)
    throw new Unkept(`${what} has neither a variation nor a rollout`)
  if (rollout.contextKind !== undefined && rollout.contextKind !== null && rollout.contextKind !== 'user')
    throw new Unkept(
      `${what} splits contexts of kind ${JSON.stringify(rollout.contextKind)} (multi-context): flagd's contexts have no kinds`,
    )
  const split = shares(v, rollout.variations, what)
  if (split.length === 1) return (split[0] as [string, number])[0]
  // LaunchDarkly's bucket 0: the first entry with a weight
  const first = rollout.variations.find((e) => isObject(e) && (e.weight as number) > 0) as Record<string, unknown>
  percent()
  // an experiment always buckets by key; a context without the attribute takes LaunchDarkly's bucket 0
  const by = rollout.kind === 'experiment' || typeof rollout.bucketBy !== 'string' ? 'key' : rollout.bucketBy
  const attribute = { var: attributePath(by, rollout.contextKind) }
  return {
    if: [
      { '===': [attribute, null] },
      variationName(v, first.variation, what),
      { fractional: [{ cat: [`${flagName}.`, attribute] }, ...split.map(([name, w]) => [name, w])] },
    ],
  }
}

/** The individual targets, in LaunchDarkly's order: `contextTargets` when present (its user entries stand for `targets`). */
function targetBranches(f: LdFlag, v: LdVariants): unknown[] {
  const targets = (Array.isArray(f.targets) ? f.targets : []).filter(isObject)
  const context = (Array.isArray(f.contextTargets) ? f.contextTargets : []).filter(isObject)
  const order =
    context.length === 0
      ? targets
      : context.map((t) => {
          if (t.contextKind === undefined || t.contextKind === null || t.contextKind === 'user')
            return targets.find((u) => u.variation === t.variation) ?? { values: [] }
          if (Array.isArray(t.values) && t.values.length > 0)
            throw new Unkept(
              `individual targets of context kind ${JSON.stringify(t.contextKind)} (multi-context): flagd's contexts have no kinds`,
            )
          return { values: [] }
        })
  const branches: unknown[] = []
  for (const t of order) {
    const keys = (Array.isArray(t.values) ? t.values : []).filter((k) => typeof k === 'string')
    if (keys.length === 0) continue
    branches.push({ in: [{ var: 'targetingKey' }, keys] }, variationName(v, t.variation, 'an individual target'))
  }
  return branches
}

function prerequisitesOf(f: LdFlag): LdPrerequisite[] {
  if (f.prerequisites === undefined || f.prerequisites === null) return []
  if (!Array.isArray(f.prerequisites)) throw new Unkept('its prerequisites are not a list')
  return f.prerequisites.map((p) => {
    if (!isObject(p) || typeof p.key !== 'string' || typeof p.variation !== 'number')
      throw new Unkept('a prerequisite without a key or a variation')
    return { key: p.key, variation: p.variation }
  })
}

/** True when a flag has individual targets or rules. */
const hasTargeting = (f: LdFlag): boolean =>
  [f.targets, f.contextTargets, f.rules].some((list) => Array.isArray(list) && list.length > 0) ||
  (isObject(f.fallthrough) && f.fallthrough.rollout !== undefined)

/** What a flag that is on serves: its `if` chain (or its one variant), and whether a percentage split is in it. */
function chain(
  f: LdFlag,
  flagName: string,
  v: LdVariants,
  segments: SegmentNames,
): { branches: unknown[]; fallthrough: unknown; percentages: boolean } {
  let percentages = false
  const percent = () => {
    percentages = true
  }
  const branches = [...targetBranches(f, v)]
  ;(Array.isArray(f.rules) ? f.rules : []).forEach((rule, i) => {
    const what = `rule ${i + 1}`
    try {
      const r = isObject(rule) ? rule : {}
      branches.push(clausesCondition(r.clauses, segments), served(flagName, v, r, what, percent))
    } catch (e) {
      if (e instanceof Unkept && !e.message.startsWith(what)) throw new Unkept(`${what}: ${e.message}`)
      throw e
    }
  })
  const fallthrough = served(flagName, v, f.fallthrough, 'the fallthrough', percent)
  return { branches, fallthrough, percentages }
}

/**
 * The flag `f` (to be named `flagName`) translated; throws {@link Unkept} with the reason it cannot
 * be. A flag that is off with an off variation serves it whatever its rules say: they are not read.
 */
export function translateLdFlag(f: LdFlag, flagName: string, segments: SegmentNames): LdTranslated {
  const v = ldVariants(f.variations, f.names)
  const hasOff = f.offVariation !== undefined && f.offVariation !== null
  const off = hasOff ? variationName(v, f.offVariation, 'the off variation') : undefined
  const serving = f.on || off === undefined
  const prerequisites = serving ? prerequisitesOf(f) : []
  const definition: Record<string, unknown> = { type: v.type }
  if (f.description !== undefined) definition.description = f.description
  definition.variants = v.variants
  if (off !== undefined) definition.value = v.variants[off]
  else definition.defaultValue = null
  const notes: LdTranslated['notes'] = []
  let percentages = false
  if (serving) {
    const { branches, fallthrough, percentages: split } = chain(f, flagName, v, segments)
    percentages = split
    if (f.on && branches.length === 0 && typeof fallthrough === 'string' && prerequisites.length === 0) {
      definition.value = v.variants[fallthrough]
      delete definition.defaultValue
    } else
      definition.targeting =
        branches.length > 0
          ? { if: [...branches, fallthrough] }
          : typeof fallthrough === 'string'
            ? { if: [true, fallthrough] }
            : fallthrough
    if (!f.on) definition.enabled = false
  } else if (hasTargeting(f))
    notes.push({
      field: 'targeting',
      reason: 'off in LaunchDarkly, so imported serving its off variation: its targets and rules are not carried',
    })
  const given = Array.isArray(f.tags) ? f.tags : []
  const tags = given.filter((t) => tagProblem(t) === undefined).slice(0, TAGS_MAX)
  const dropped = given.filter((t) => !tags.includes(t))
  if (dropped.length > 0)
    notes.push({ field: 'tags', reason: `left out, as flagd cannot hold them: ${dropped.map((t) => JSON.stringify(t)).join(', ')}` })
  if (tags.length > 0) definition.tags = tags
  definition.metadata = { originalKey: f.key, importedFrom: 'launchdarkly' }
  return { definition, variants: v, prerequisites, notes, percentages }
}
