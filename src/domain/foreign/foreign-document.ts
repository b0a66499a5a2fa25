/**
 * A file of another tool read as an import document (docs/migrations.md#from-other-tools): its
 * translation becomes a migration file, which is validated as any import; a translated flag the
 * daemon's validation refuses is skipped with that reason (never half-imported, never failing the
 * whole import), as is a flag that refers to a segment the validation refuses.
 */

import { type FieldProblem, ValidationFailedError } from '../errors.ts'
import { type RuleChecks, rememberingRuleChecks } from '../flag-targeting-fields.ts'
import { type ParsedDocument, type ParseOptions, parseImportDocument } from '../import-document.ts'
import { isJsonObject } from '../json-object.ts'
import { type ForeignFormatEntry, foreignFormat } from './foreign-formats.ts'
import type { ForeignFormat, ScheduledImport, SkippedFlag } from './foreign-translation.ts'

/** A parsed file of another tool: the document to import, the flags skipped and the changes for later. */
export interface ForeignDocument {
  document: ParsedDocument
  skipped: SkippedFlag[]
  scheduled: ScheduledImport[]
  /** The rules found valid on the way: checking the scheduled steps again needs not compile them again. */
  ruleChecks: RuleChecks
}

/** What the translation is told besides the file. */
export interface ForeignParseOptions extends ParseOptions {
  sourceEnvironment?: string | undefined
  nowMs: number
  /** Why some flag's later changes cannot be scheduled (the flag is then skipped with it), or `undefined`. */
  refuseScheduled?: ((steps: readonly ScheduledImport[]) => string | undefined) | undefined
}

/**
 * The name (of `names`) a problem's field is about: `<head><name>` or `<head><name>.<field>`, the
 * longest such name when several fit (names may hold dots), or `undefined`. Looked up by the field's
 * prefixes, not by trying every name: a file may have thousands of flags refused at once.
 */
function ownerOf(field: string, head: string, names: ReadonlySet<string>): string | undefined {
  if (!field.startsWith(head)) return undefined
  const rest = field.slice(head.length)
  if (names.has(rest)) return rest
  for (let i = rest.lastIndexOf('.'); i !== -1; i = i === 0 ? -1 : rest.lastIndexOf('.', i - 1)) {
    const name = rest.slice(0, i)
    if (names.has(name)) return name
  }
  return undefined
}

/**
 * Translates `raw` (a file of `format`, by its registered translator unless `entry` gives one) and
 * parses the result (see module comment); throws the file's problems as a whole (`400`) when the
 * translator cannot read it.
 */
export function parseForeignDocument(
  format: ForeignFormat,
  raw: unknown,
  options: ForeignParseOptions,
  entry: Pick<ForeignFormatEntry, 'translate'> = foreignFormat(format),
): ForeignDocument {
  // the translator validates each flag it makes, and the document of them is validated again: a rule found valid is not compiled twice
  const ruleChecks: RuleChecks = new WeakMap()
  return { ...rememberingRuleChecks(() => translateAndParse(format, raw, options, entry), ruleChecks), ruleChecks }
}

function translateAndParse(
  format: ForeignFormat,
  raw: unknown,
  options: ForeignParseOptions,
  entry: Pick<ForeignFormatEntry, 'translate'>,
): Omit<ForeignDocument, 'ruleChecks'> {
  const translated = entry.translate(raw, {
    nowMs: options.nowMs,
    ...(options.sourceEnvironment !== undefined ? { sourceEnvironment: options.sourceEnvironment } : {}),
  })
  if ('problems' in translated) throw new ValidationFailedError(translated.problems)
  const flags: Record<string, Record<string, unknown>> = { ...translated.flags }
  const segments: Record<string, unknown> = { ...translated.segments }
  const skipped = [...translated.skipped]
  const warnings: FieldProblem[] = [...translated.warnings]
  const originalKey = (name: string) => {
    const meta = flags[name]?.metadata
    return isJsonObject(meta) && typeof meta.originalKey === 'string' ? meta.originalKey : name
  }
  // changes a later time brings become scheduled change requests (docs/migrations.md#changes-a-later-time-brings);
  // a flag whose changes cannot is skipped whole rather than imported without them
  const stepsOf = new Map<string, ScheduledImport[]>()
  for (const step of translated.scheduled) {
    const steps = stepsOf.get(step.flag)
    if (steps === undefined) stepsOf.set(step.flag, [step])
    else steps.push(step)
  }
  for (const [name, steps] of stepsOf)
    if (Object.hasOwn(flags, name)) {
      const reason = options.refuseScheduled?.(steps)
      if (reason === undefined) continue
      skipped.push({ name: originalKey(name), reason })
      delete flags[name]
    }
  // each round drops what the validation refused; a flag that referred to a dropped segment is refused the next round
  for (;;) {
    const doc = {
      environment: options.sourceEnvironment ?? format,
      version: '1.0.0',
      createdAt: new Date(options.nowMs).toISOString(),
      flags,
      segments,
    }
    const parsed = parseImportDocument(doc, options)
    if (parsed.ok) {
      const document = parsed.document
      document.warnings.unshift(...warnings)
      document.source = { environment: translated.environment ?? options.sourceEnvironment ?? '', version: '', createdAt: '', format }
      return { document, skipped, scheduled: translated.scheduled.filter((s) => document.flags.has(s.flag)) }
    }
    const flagNames = new Set(Object.keys(flags))
    const segmentNames = new Set(Object.keys(segments))
    const refused = new Map<string, string[]>()
    let progress = false
    const left: FieldProblem[] = []
    for (const p of parsed.problems) {
      const flag = ownerOf(p.field, 'flags.', flagNames)
      const segment = flag === undefined ? ownerOf(p.field, 'segments.', segmentNames) : undefined
      if (flag !== undefined)
        refused.set(flag, [...(refused.get(flag) ?? []), `${p.field.slice(`flags.${flag}`.length + 1) || 'flag'}: ${p.reason}`])
      else if (segment !== undefined && Object.hasOwn(segments, segment)) {
        delete segments[segment]
        warnings.push({ field: p.field, reason: `segment not imported: ${p.reason}` })
        progress = true
      } else if (segment === undefined) left.push(p)
    }
    for (const [flag, reasons] of refused) {
      skipped.push({ name: originalKey(flag), reason: `refused by flagd's validation: ${reasons.join('; ')}` })
      delete flags[flag]
      progress = true
    }
    if (left.length > 0 || !progress) throw new ValidationFailedError(left.length > 0 ? left : parsed.problems)
  }
}
