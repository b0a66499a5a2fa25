/**
 * A file of another tool read as an import document (docs/migrations.md#from-other-tools): its
 * translation becomes a migration file, which is validated as any import; a translated flag the
 * daemon's validation refuses is skipped with that reason (never half-imported, never failing the
 * whole import), as is a flag that refers to a segment the validation refuses.
 */

import { type FieldProblem, ValidationFailedError } from '../errors.ts'
import { type ParsedDocument, type ParseOptions, parseImportDocument } from '../import-document.ts'
import { isJsonObject } from '../json-object.ts'
import { type ForeignFormatEntry, foreignFormat } from './foreign-formats.ts'
import type { ForeignFormat, ScheduledImport, SkippedFlag } from './foreign-translation.ts'

/** A parsed file of another tool: the document to import, the flags skipped and the changes for later. */
export interface ForeignDocument {
  document: ParsedDocument
  skipped: SkippedFlag[]
  scheduled: ScheduledImport[]
}

/** What the translation is told besides the file. */
export interface ForeignParseOptions extends ParseOptions {
  sourceEnvironment?: string | undefined
  nowMs: number
  /** Why some flag's later changes cannot be scheduled (the flag is then skipped with it), or `undefined`. */
  refuseScheduled?: ((steps: readonly ScheduledImport[]) => string | undefined) | undefined
}

/** The flag (of `names`) a problem's field is about (`flags.<name>` or `flags.<name>.<field>`), or `undefined`. */
function flagOf(field: string, names: readonly string[]): string | undefined {
  let found: string | undefined
  for (const name of names)
    if ((field === `flags.${name}` || field.startsWith(`flags.${name}.`)) && (found === undefined || name.length > found.length))
      found = name
  return found
}

/** The segment a problem's field is about (`segments.<name>...`), among `names`, or `undefined`. */
function segmentOf(field: string, names: readonly string[]): string | undefined {
  let found: string | undefined
  for (const name of names)
    if ((field === `segments.${name}` || field.startsWith(`segments.${name}.`)) && (found === undefined || name.length > found.length))
      found = name
  return found
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
  for (const name of new Set(translated.scheduled.map((s) => s.flag)))
    if (Object.hasOwn(flags, name)) {
      const reason = options.refuseScheduled?.(translated.scheduled.filter((s) => s.flag === name))
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
    const flagNames = Object.keys(flags)
    const segmentNames = Object.keys(segments)
    const refused = new Map<string, string[]>()
    let progress = false
    const left: FieldProblem[] = []
    for (const p of parsed.problems) {
      const flag = flagOf(p.field, flagNames)
      const segment = flag === undefined ? segmentOf(p.field, segmentNames) : undefined
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
