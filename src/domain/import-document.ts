/**
 * The import document (docs/migrations.md, docs/targeting.md#flagd-format): parsing a migration file,
 * FlagFlow 1.7 files included, or an OpenFeature flagd document into validated definitions while
 * collecting every problem at once.
 */

import type { FieldProblem } from './errors.ts'
import type { ExportedSegment } from './export-document.ts'
import type { FlagDefinition, JsonObject } from './flag.ts'
import { validateDefinition } from './flag-definition.ts'
import { indexNames, nameProblem } from './flag-name.ts'
import { segmentRuleProblems } from './flag-targeting-fields.ts'
import { flagdDocumentWarnings, fromFlagdFlag, isFlagdDocument } from './flagd-document.ts'
import { fromFlagFlow } from './flagflow-flag.ts'
import type { ForeignFormat } from './foreign/foreign-translation.ts'
import { parseIsoInstant } from './iso-instant.ts'
import { forbiddenKeys, isJsonObject as isObject } from './json-object.ts'
import { newCheckBudget } from './regex-pattern.ts'
import { unknownFieldReason } from './spelling-suggestion.ts'
import { VARIANT_NAME } from './variant-name.ts'

const TOP_LEVEL = ['environment', 'version', 'createdAt', 'flags', 'segments']

/** Where an imported document says it came from. */
export interface DocumentSource {
  environment: string
  version: string
  createdAt: string
  /**
   * `flagd` for an OpenFeature flagd document (docs/targeting.md#flagd-format), the tool's name for
   * another tool's file (docs/migrations.md#from-other-tools); absent for a migration file.
   */
  format?: 'flagd' | ForeignFormat
}

/** A parsed, validated import document, with what was translated or dropped on the way. */
/**
 * A flag's definition as a document brings it: `archived: true` from a migration file (absent there:
 * a live flag); never from a flagd document, whose flags keep the state they have (docs/migrations.md).
 */
export type ImportedDefinition = FlagDefinition & { archived?: true }

/** A parsed import document. */
export interface ParsedDocument {
  source: DocumentSource
  flags: Map<string, ImportedDefinition>
  segments: Map<string, ExportedSegment>
  warnings: FieldProblem[]
  /** A flagd document's flags as written, to recognise this daemon's own export (docs/migrations.md#flagd-round-trip). */
  flagdFlags?: ReadonlyMap<string, unknown>
}

/** Options of `parseImportDocument`. */
export interface ParseOptions {
  /** Segment rules the flags may refer to besides the document's own (merge keeps them). */
  knownSegments?: ReadonlyMap<string, unknown>
}

/** The top-level checks of a migration file (environment, version, createdAt, unknown fields). */
function checkMigrationHead(raw: Record<string, unknown>, problem: (field: string, reason: string) => void): void {
  for (const key of Object.keys(raw)) if (!TOP_LEVEL.includes(key)) problem(key, unknownFieldReason(key, TOP_LEVEL))
  for (const key of ['environment', 'version', 'createdAt'] as const) {
    if (!Object.hasOwn(raw, key)) problem(key, 'required')
    else if (typeof raw[key] !== 'string') problem(key, 'must be a string')
  }
  if (typeof raw.version === 'string') {
    const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(raw.version)
    if (!m) problem('version', 'must be MAJOR.MINOR.PATCH')
    else if (m[1] !== '1') problem('version', `major version ${m[1]} is not supported (this flagd reads 1.x.x)`)
  }
  if (typeof raw.createdAt === 'string' && parseIsoInstant(raw.createdAt, true) === undefined) {
    problem('createdAt', 'must be an ISO 8601 timestamp')
  }
}

/**
 * The document's segments (`segments` of a migration file, `$evaluators` of a flagd document),
 * each rule checked against the others and `known`, cycles included.
 */
function parseSegments(
  raw: unknown,
  field: string,
  flagd: boolean,
  known: ReadonlyMap<string, unknown>,
  problem: (f: string, r: string) => void,
) {
  const out = new Map<string, ExportedSegment>()
  if (raw === undefined) return out
  if (!isObject(raw)) {
    problem(field, 'must be an object keyed by segment name')
    return out
  }
  const entries = Object.entries(raw).map(([name, value]) => {
    const description = flagd ? '' : isObject(value) ? value.description : undefined
    const rule = flagd ? value : isObject(value) ? value.rule : undefined
    return { name, description: description ?? '', rule }
  })
  const rules = new Map(known)
  for (const e of entries) rules.set(e.name, e.rule)
  for (const { name, description, rule } of entries) {
    const at = `${field}.${name}`
    if (!VARIANT_NAME.test(name)) problem(at, 'a segment name is 1 to 64 of A-Z a-z 0-9 . _ -')
    if (!flagd) {
      const value = (raw as Record<string, unknown>)[name]
      if (!isObject(value)) {
        problem(at, 'must be {description?, rule}')
        continue
      }
      for (const key of Object.keys(value))
        if (key !== 'description' && key !== 'rule') problem(`${at}.${key}`, unknownFieldReason(key, ['description', 'rule']))
      if (typeof description !== 'string') problem(`${at}.description`, 'must be a string')
    }
    const others = new Map(rules)
    others.delete(name)
    const found = segmentRuleProblems(name, rule, others, flagd ? at : `${at}.rule`)
    for (const p of found) problem(p.field, p.reason)
    if (found.length === 0) out.set(name, { description: String(description), rule: rule as JsonObject })
  }
  return out
}

/**
 * Parses and validates an import document, reporting every problem (docs/migrations.md, docs/targeting.md#flagd-format): a
 * migration file (FlagFlow 1.7 files included) or an OpenFeature flagd document, recognised by its
 * shape.
 */
export function parseImportDocument(
  raw: unknown,
  options: ParseOptions = {},
): { ok: true; document: ParsedDocument } | { ok: false; problems: FieldProblem[] } {
  const problems: FieldProblem[] = []
  const problem = (field: string, reason: string) => problems.push({ field, reason })
  if (!isObject(raw)) return { ok: false, problems: [{ field: 'body', reason: 'must be a JSON object (an export document)' }] }
  const forbidden = forbiddenKeys(raw)
  if (forbidden.length > 0) return { ok: false, problems: forbidden.map((field) => ({ field, reason: 'this key is not allowed' })) }
  const flagd = isFlagdDocument(raw)
  const warnings: FieldProblem[] = flagd ? flagdDocumentWarnings(raw) : []
  if (!flagd) checkMigrationHead(raw, problem)
  const segments = parseSegments(
    flagd ? raw.$evaluators : raw.segments,
    flagd ? '$evaluators' : 'segments',
    flagd,
    options.knownSegments ?? new Map(),
    problem,
  )
  const segmentRules = new Map(options.knownSegments ?? [])
  for (const [name, s] of segments) segmentRules.set(name, s.rule)

  const flags = new Map<string, ImportedDefinition>()
  const budget = newCheckBudget() // one for the whole document: many costly flags cannot add up
  if (!Object.hasOwn(raw, 'flags')) problem('flags', 'required')
  else if (!isObject(raw.flags)) problem('flags', 'must be an object keyed by flag name')
  else {
    for (const [name, value] of Object.entries(raw.flags)) {
      const prefix = `flags.${name}.`
      const whyName = nameProblem(name)
      if (whyName) problem(`flags.${name}`, `invalid name: ${whyName}`)
      if (!isObject(value)) {
        problem(`flags.${name}`, 'must be an object')
        continue
      }
      const input = flagd
        ? fromFlagdFlag(
            value,
            (field, reason) => problem(`${prefix}${field}`, reason),
            (field, reason) => warnings.push({ field: `${prefix}${field}`, reason }),
          )
        : fromFlagFlow(
            value,
            (field, reason) => problem(`${prefix}${field}`, reason),
            (field, reason) => warnings.push({ field: `${prefix}${field}`, reason }),
          )
      if (!input) continue
      if (input.valueExists === false && Object.hasOwn(input, 'value'))
        warnings.push({ field: `${prefix}value`, reason: 'ignored: valueExists is false' })
      // a migration file says whether each flag is archived (docs/migrations.md)
      const { archived, ...fields } = input
      if (!flagd && archived !== undefined && archived !== null && typeof archived !== 'boolean')
        problem(`${prefix}archived`, 'must be true or false')
      const result = validateDefinition(flagd ? input : fields, { prefix, valueBesideFalse: 'ignore', budget, segments: segmentRules })
      if (!result.ok) problems.push(...result.problems)
      else if (!whyName) flags.set(name, archived === true && !flagd ? { ...result.definition, archived: true } : result.definition)
    }
    const index = indexNames(flags.keys())
    for (const name of flags.keys()) {
      const other = index.collision(name)
      if (other?.startsWith(`${name}/`)) problem(`flags.${name}`, `is both a flag and the group of ${other}`)
    }
  }
  if (problems.length > 0) return { ok: false, problems }
  const meta = flagd && isObject(raw.metadata) ? raw.metadata : {}
  const source: DocumentSource = flagd
    ? { environment: typeof meta.environment === 'string' ? meta.environment : '', version: '', createdAt: '', format: 'flagd' }
    : { environment: raw.environment as string, version: raw.version as string, createdAt: raw.createdAt as string }
  const flagdFlags = flagd ? { flagdFlags: new Map(Object.entries(raw.flags as Record<string, unknown>)) } : {}
  return { ok: true, document: { source, flags, segments, warnings, ...flagdFlags } }
}
