/**
 * Reading Unleash's export (`POST /api/admin/features-batch/export`, docs/migrations.md#from-unleash):
 * the features, and what belongs to each in the one environment imported (its on/off state,
 * variants and strategies), its tags and dependencies, and the segments by id.
 */

import type { FieldProblem } from '../errors.ts'

/** A constraint of a strategy or segment, as Unleash writes it. */
export interface UnleashConstraint {
  contextName: string
  operator: string
  values?: unknown[]
  value?: unknown
  inverted?: boolean
  caseInsensitive?: boolean
}

/** A variant of a feature or strategy, as Unleash writes it. */
export interface UnleashVariant {
  name: string
  weight: number
  stickiness?: string
  payload?: { type: string; value: string }
  overrides?: { contextName: string; values: string[] }[]
}

/** A strategy instance of a feature in the environment. */
export interface UnleashStrategy {
  name: string
  parameters: Record<string, unknown>
  constraints: UnleashConstraint[]
  segments: number[]
  variants: UnleashVariant[]
}

/** A dependency of a feature on a parent feature. */
export interface UnleashDependency {
  feature: string
  enabled?: boolean
  variants?: string[]
}

/** One feature with what belongs to it in the environment imported. */
export interface UnleashFeature {
  name: string
  description: string
  type: string
  project?: string
  /** On in the environment (a feature the environment does not list is off there). */
  enabled: boolean
  variants: UnleashVariant[]
  strategies: UnleashStrategy[]
  /** True when every strategy it has in the environment is disabled (Unleash's SDKs, which never see those, then serve it to everyone). */
  allStrategiesDisabled: boolean
  tags: string[]
  dependencies: UnleashDependency[]
}

/** A segment: its constraints, or `undefined` when the file names it without them (Unleash's own export does). */
export interface UnleashSegment {
  id: number
  name: string
  constraints: UnleashConstraint[] | undefined
}

/** What an import reads from the file. */
export interface UnleashExport {
  environment: string | undefined
  features: UnleashFeature[]
  segments: Map<number, UnleashSegment>
  warnings: FieldProblem[]
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : [])
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** True when `raw` has the shape of Unleash's export: `features` and `featureStrategies` lists. */
export function looksLikeUnleashExport(raw: unknown): raw is Obj {
  return isObj(raw) && Array.isArray(raw.features) && Array.isArray(raw.featureStrategies)
}

/** The environment to import: the one asked for, else the first the file names (said in `warnings`). */
function chooseEnvironment(raw: Obj, asked: string | undefined, warnings: FieldProblem[]): string | undefined | FieldProblem {
  const named = [...list(raw.featureEnvironments), ...list(raw.featureStrategies)]
    .map((e) => text(e.environment))
    .filter((e) => e !== undefined)
  const distinct = [...new Set(named)]
  if (asked !== undefined) {
    if (distinct.length > 0 && !distinct.includes(asked))
      return { field: 'sourceEnvironment', reason: `the file has no environment ${asked}; it has ${distinct.join(', ')}` }
    return asked
  }
  const first = distinct[0]
  if (first !== undefined)
    warnings.push({
      field: 'sourceEnvironment',
      reason: `imported Unleash's environment ${first}, the first in the file${distinct.length > 1 ? ` (it also has ${distinct.slice(1).join(', ')}; choose with sourceEnvironment)` : ''}`,
    })
  return first
}

/** Reads the file's features in `sourceEnvironment` (see module comment), or the problems that make it unreadable. */
export function readUnleashExport(raw: unknown, sourceEnvironment: string | undefined): UnleashExport | { problems: FieldProblem[] } {
  if (!looksLikeUnleashExport(raw))
    return { problems: [{ field: 'body', reason: "is not Unleash's export: it needs the lists features and featureStrategies" }] }
  const warnings: FieldProblem[] = []
  const chosen = chooseEnvironment(raw, sourceEnvironment, warnings)
  if (typeof chosen === 'object') return { problems: [chosen] }
  const environment = chosen
  const inEnvironment = (e: Obj) => environment === undefined || e.environment === undefined || e.environment === environment
  const problems: FieldProblem[] = []
  const features = (raw.features as unknown[]).flatMap((f, i) => {
    if (isObj(f) && typeof f.name === 'string' && f.name !== '') return [f]
    problems.push({ field: `features[${i}]`, reason: 'must be an object with a name' })
    return []
  })
  if (problems.length > 0) return { problems }

  const states = new Map<string, Obj>()
  for (const e of list(raw.featureEnvironments)) {
    const name = text(e.featureName) ?? text(e.name)
    if (name !== undefined && inEnvironment(e) && !states.has(name)) states.set(name, e)
  }
  const strategies = new Map<string, { active: UnleashStrategy[]; disabled: number }>()
  const sorted = list(raw.featureStrategies)
    .filter(inEnvironment)
    .map((s, i) => ({ s, i }))
    .sort((a, b) => Number(a.s.sortOrder ?? 0) - Number(b.s.sortOrder ?? 0) || a.i - b.i)
  for (const { s } of sorted) {
    const feature = text(s.featureName)
    if (feature === undefined) continue
    const entry = strategies.get(feature) ?? { active: [], disabled: 0 }
    strategies.set(feature, entry)
    if (s.disabled === true) entry.disabled++
    else entry.active.push(readStrategy(s))
  }
  const tags = new Map<string, string[]>()
  for (const t of list(raw.featureTags)) {
    const feature = text(t.featureName)
    const type = text(t.tagType) ?? text(t.type)
    const value = text(t.tagValue) ?? text(t.value)
    if (feature !== undefined && type !== undefined && value !== undefined)
      tags.set(feature, [...(tags.get(feature) ?? []), `${type}:${value}`])
  }
  const dependencies = new Map<string, UnleashDependency[]>()
  for (const d of list(raw.dependencies)) {
    const feature = text(d.feature)
    if (feature === undefined) continue
    const parents = list(d.dependencies).flatMap((p) =>
      typeof p.feature === 'string'
        ? [{ feature: p.feature, enabled: p.enabled === false ? false : undefined, variants: stringList(p.variants) }]
        : [],
    )
    dependencies.set(feature, [...(dependencies.get(feature) ?? []), ...parents])
  }
  const segments = new Map<number, UnleashSegment>()
  for (const s of list(raw.segments))
    if (typeof s.id === 'number')
      segments.set(s.id, {
        id: s.id,
        name: text(s.name) ?? String(s.id),
        constraints: Array.isArray(s.constraints) ? readConstraints(s.constraints) : undefined,
      })

  return {
    environment,
    segments,
    warnings,
    features: features.map((f) => {
      const name = f.name as string
      const state = states.get(name)
      const own = strategies.get(name)
      return {
        name,
        description: text(f.description) ?? '',
        type: text(f.type) ?? 'release',
        project: text(f.project),
        enabled: state?.enabled === true,
        variants: readVariants(state?.variants ?? f.variants),
        strategies: own?.active ?? [],
        allStrategiesDisabled: own !== undefined && own.active.length === 0 && own.disabled > 0,
        tags: tags.get(name) ?? [],
        dependencies: dependencies.get(name) ?? [],
      }
    }),
  }
}

function stringList(v: unknown): string[] | undefined {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined
}

function readConstraints(v: unknown): UnleashConstraint[] {
  return list(v).map((c) => ({
    contextName: text(c.contextName) ?? '',
    operator: text(c.operator) ?? '',
    values: Array.isArray(c.values) ? c.values : undefined,
    value: c.value,
    inverted: c.inverted === true,
    caseInsensitive: c.caseInsensitive === true,
  }))
}

function readVariants(v: unknown): UnleashVariant[] {
  return list(v).map((x) => ({
    name: text(x.name) ?? '',
    weight: typeof x.weight === 'number' ? x.weight : Number.NaN,
    stickiness: text(x.stickiness),
    payload:
      isObj(x.payload) && typeof x.payload.type === 'string' ? { type: x.payload.type, value: String(x.payload.value ?? '') } : undefined,
    overrides: list(x.overrides).map((o) => ({ contextName: text(o.contextName) ?? '', values: stringList(o.values) ?? [] })),
  }))
}

function readStrategy(s: Obj): UnleashStrategy {
  return {
    name: text(s.name) ?? text(s.strategyName) ?? '',
    parameters: isObj(s.parameters) ? s.parameters : {},
    constraints: readConstraints(s.constraints),
    segments: Array.isArray(s.segments) ? s.segments.filter((x): x is number => typeof x === 'number') : [],
    variants: readVariants(s.variants),
  }
}
