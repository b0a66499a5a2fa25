/**
 * The rule builder's model (docs/ui.md): the common shapes of a flagd rule as rows a person edits,
 * "attribute · operator · value → serve variant", a percentage split and a default, and the exact
 * JsonLogic they stand for. `readTargeting` accepts a rule only when writing its model back gives
 * the very same JSON, so the builder never shows a rule it would rewrite: anything else stays in the
 * JSON editor, untouched. One spelling is read as the builder's own: an `if` ending in an explicit
 * `null` ("otherwise the normal answer", as the docs write it) means what the same `if` without it
 * means, and is saved without it.
 */

/** A value in a condition, with its JSON type kept (a number stays a number). */
export type Literal = string | number | boolean

/** How an operator's value is typed in. */
export type ValueKind = 'text' | 'list' | 'number' | 'version' | 'segment'

/** The operators a person needs, by the words shown for them (also their option values). */
export const OPERATORS = [
  { id: 'equals', kind: 'text' },
  { id: 'not equals', kind: 'text' },
  { id: 'one of', kind: 'list' },
  { id: 'not one of', kind: 'list' },
  { id: 'contains', kind: 'text' },
  { id: 'starts with', kind: 'text' },
  { id: 'ends with', kind: 'text' },
  { id: 'greater than', kind: 'number' },
  { id: 'at least', kind: 'number' },
  { id: 'less than', kind: 'number' },
  { id: 'at most', kind: 'number' },
  { id: 'version =', kind: 'version' },
  { id: 'version ≠', kind: 'version' },
  { id: 'version >', kind: 'version' },
  { id: 'version ≥', kind: 'version' },
  { id: 'version <', kind: 'version' },
  { id: 'version ≤', kind: 'version' },
  { id: 'version same major', kind: 'version' },
  { id: 'version same minor', kind: 'version' },
  { id: 'in segment', kind: 'segment' },
  { id: 'not in segment', kind: 'segment' },
] as const satisfies readonly { id: string; kind: ValueKind }[]

export type Operator = (typeof OPERATORS)[number]['id']

/** The kind of value `operator` takes. */
export const kindOf = (operator: Operator): ValueKind => (OPERATORS.find((o) => o.id === operator) as { kind: ValueKind }).kind

/** One condition; `attribute` is unused by the segment operators. */
export interface Condition {
  attribute: string
  operator: Operator
  values: Literal[]
}

/** Conditions that must all hold, and the variant served when they do. */
export interface BuilderRule {
  conditions: Condition[]
  serve: string
}

/** A percentage split: weights per variant (relative, flagd's `fractional`), sticky by an attribute ('' = targetingKey). */
export interface Split {
  by: string
  weights: { variant: string; weight: number }[]
}

/** The whole builder: rules in order, then the split, then the default variant ('' = the flag's own value). */
export interface TargetingModel {
  rules: BuilderRule[]
  split: Split | null
  fallback: string
}

type Json = unknown
const COMPARE: Partial<Record<Operator, string>> = {
  equals: '==',
  'not equals': '!=',
  'greater than': '>',
  'at least': '>=',
  'less than': '<',
  'at most': '<=',
}
const SEMVER: Partial<Record<Operator, string>> = {
  'version =': '=',
  'version ≠': '!=',
  'version >': '>',
  'version ≥': '>=',
  'version <': '<',
  'version ≤': '<=',
  'version same major': '^',
  'version same minor': '~',
}

/** The JsonLogic of one condition. */
export function conditionRule(c: Condition): Json {
  const attr = { var: c.attribute }
  const v = c.values[0] ?? ''
  const compare = COMPARE[c.operator]
  if (compare) return { [compare]: [attr, v] }
  const semver = SEMVER[c.operator]
  if (semver) return { sem_ver: [attr, semver, v] }
  switch (c.operator) {
    case 'one of':
      return { in: [attr, [...c.values]] }
    case 'not one of':
      return { '!': { in: [attr, [...c.values]] } }
    case 'contains':
      return { in: [v, attr] }
    case 'starts with':
      return { starts_with: [attr, v] }
    case 'ends with':
      return { ends_with: [attr, v] }
    case 'in segment':
      return { $ref: String(v) }
    default:
      return { '!': { $ref: String(v) } }
  }
}

/** The JsonLogic of conditions that must all hold. */
export function conditionsRule(conditions: readonly Condition[]): Json {
  return conditions.length === 1 ? conditionRule(conditions[0] as Condition) : { and: conditions.map(conditionRule) }
}

/** The JsonLogic of a split (flagd's `fractional`; weights made integers when they are not). */
export function splitRule(split: Split): Json {
  const whole = split.weights.every((w) => Number.isInteger(w.weight))
  const buckets = split.weights.map((w) => [w.variant, whole ? w.weight : Math.round(w.weight * 1000)])
  const key = split.by === '' ? [] : [{ cat: [{ var: '$flagd.flagKey' }, { var: split.by }] }]
  return { fractional: [...key, ...buckets] }
}

/** The rule a model stands for, or `null` for none. */
export function writeTargeting(m: TargetingModel): Json {
  const split = m.split ? splitRule(m.split) : undefined
  const otherwise = split && m.fallback !== '' ? { or: [split, m.fallback] } : (split ?? (m.fallback === '' ? undefined : m.fallback))
  if (m.rules.length === 0) {
    if (otherwise === undefined) return null
    return typeof otherwise === 'string' ? { if: [true, otherwise] } : otherwise
  }
  const branches = m.rules.flatMap((r) => [conditionsRule(r.conditions), r.serve])
  return { if: otherwise === undefined ? branches : [...branches, otherwise] }
}

const isObject = (n: Json): n is Record<string, Json> => n !== null && typeof n === 'object' && !Array.isArray(n)
/** The one key of an object and its value (the shape of every JsonLogic operation), else `undefined`. */
export const onlyKey = (n: Json): [string, Json] | undefined => {
  if (!isObject(n)) return undefined
  const keys = Object.keys(n)
  return keys.length === 1 ? [keys[0] as string, n[keys[0] as string]] : undefined
}
const isLiteral = (v: Json): v is Literal => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
const attributeOf = (n: Json): string | undefined => {
  const e = onlyKey(n)
  return e && e[0] === 'var' && typeof e[1] === 'string' && e[1] !== '' ? e[1] : undefined
}

/** The condition a piece of JsonLogic is, when it is one the builder shows. */
export function readCondition(n: Json): Condition | undefined {
  const e = onlyKey(n)
  if (!e) return undefined
  const [op, raw] = e
  if (op === '$ref') return typeof raw === 'string' ? { attribute: '', operator: 'in segment', values: [raw] } : undefined
  if (op === '!') {
    const inner = readCondition(raw)
    if (inner?.operator === 'in segment') return { ...inner, operator: 'not in segment' }
    if (inner?.operator === 'one of') return { ...inner, operator: 'not one of' }
    return undefined
  }
  if (!Array.isArray(raw)) return undefined
  const compare = (Object.entries(COMPARE) as [Operator, string][]).find(([, o]) => o === op)?.[0]
  const attribute = attributeOf(raw[0])
  if (compare && raw.length === 2 && attribute && isLiteral(raw[1])) return { attribute, operator: compare, values: [raw[1]] }
  if ((op === 'starts_with' || op === 'ends_with') && raw.length === 2 && attribute && typeof raw[1] === 'string')
    return { attribute, operator: op === 'starts_with' ? 'starts with' : 'ends with', values: [raw[1]] }
  if (op === 'sem_ver' && raw.length === 3 && attribute && typeof raw[2] === 'string') {
    const semver = (Object.entries(SEMVER) as [Operator, string][]).find(([, o]) => o === raw[1])?.[0]
    return semver ? { attribute, operator: semver, values: [raw[2]] } : undefined
  }
  if (op === 'in' && raw.length === 2) {
    if (attribute && Array.isArray(raw[1]) && raw[1].every(isLiteral)) return { attribute, operator: 'one of', values: [...raw[1]] }
    const contained = attributeOf(raw[1])
    if (contained && typeof raw[0] === 'string') return { attribute: contained, operator: 'contains', values: [raw[0]] }
  }
  return undefined
}

/** Conditions joined by `and` (or a single one). */
export function readConditions(n: Json): Condition[] | undefined {
  const e = onlyKey(n)
  const parts = e && e[0] === 'and' && Array.isArray(e[1]) && e[1].length > 1 ? e[1] : [n]
  const out: Condition[] = []
  for (const p of parts) {
    const c = readCondition(p)
    if (!c) return undefined
    out.push(c)
  }
  return out
}

function readSplit(n: Json): Split | undefined {
  const e = onlyKey(n)
  if (e?.[0] !== 'fractional' || !Array.isArray(e[1])) return undefined
  let args = e[1]
  let by = ''
  const cat = onlyKey(args[0])
  if (cat && cat[0] === 'cat' && Array.isArray(cat[1]) && cat[1].length === 2 && attributeOf(cat[1][0]) === '$flagd.flagKey') {
    by = attributeOf(cat[1][1]) ?? ''
    if (by === '') return undefined
    args = args.slice(1)
  }
  const weights: Split['weights'] = []
  for (const b of args) {
    if (!Array.isArray(b) || b.length !== 2 || typeof b[0] !== 'string' || typeof b[1] !== 'number') return undefined
    weights.push({ variant: b[0], weight: b[1] })
  }
  return weights.length > 0 ? { by, weights } : undefined
}

/** The "otherwise" part: a split, a variant, or a split with a variant for when it cannot bucket. */
function readOtherwise(n: Json): Pick<TargetingModel, 'split' | 'fallback'> | undefined {
  if (typeof n === 'string') return { split: null, fallback: n }
  const split = readSplit(n)
  if (split) return { split, fallback: '' }
  const e = onlyKey(n)
  if (e && e[0] === 'or' && Array.isArray(e[1]) && e[1].length === 2 && typeof e[1][1] === 'string') {
    const inner = readSplit(e[1][0])
    if (inner) return { split: inner, fallback: e[1][1] }
  }
  return undefined
}

function readAny(rule: Json): TargetingModel | undefined {
  if (rule === null || rule === undefined) return { rules: [], split: null, fallback: '' }
  const e = onlyKey(rule)
  if (e && e[0] === 'if' && Array.isArray(e[1])) {
    const args = e[1]
    if (args.length === 2 && args[0] === true && typeof args[1] === 'string') return { rules: [], split: null, fallback: args[1] }
    const rules: BuilderRule[] = []
    for (let i = 0; i + 1 < args.length; i += 2) {
      const conditions = readConditions(args[i])
      if (!conditions || typeof args[i + 1] !== 'string') return undefined
      rules.push({ conditions, serve: args[i + 1] as string })
    }
    if (args.length % 2 === 0) return { rules, split: null, fallback: '' }
    const otherwise = readOtherwise(args.at(-1))
    return otherwise ? { rules, ...otherwise } : undefined
  }
  const otherwise = readOtherwise(rule)
  return otherwise && typeof rule !== 'string' ? { rules: [], ...otherwise } : undefined
}

/** The builder's model of `rule`, or `undefined` when the builder cannot show it exactly. */
export function readTargeting(rule: Json): TargetingModel | undefined {
  const plain = withoutNullOtherwise(rule)
  const model = readAny(plain)
  if (!model) return undefined
  return JSON.stringify(writeTargeting(model)) === JSON.stringify(plain ?? null) ? model : undefined
}

/** `{"if": [c1, v1, …, null]}` as `{"if": [c1, v1, …]}`: a final `null` branch is the default anyway. */
function withoutNullOtherwise(rule: Json): Json {
  const e = onlyKey(rule)
  if (e?.[0] !== 'if' || !Array.isArray(e[1])) return rule
  const args = e[1]
  return args.length >= 3 && args.length % 2 === 1 && args.at(-1) === null ? { if: args.slice(0, -1) } : rule
}

/** A rule as the API's bodies type it (a JSON object), or `undefined` when `v` is not one (a list, a number…). */
export function asRuleObject(v: unknown): { [key: string]: unknown } | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as { [key: string]: unknown }) : undefined
}
