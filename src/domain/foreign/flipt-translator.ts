/**
 * Flipt's `flipt export` file (YAML or JSON, version 1.x) translated into flagd's flags
 * (docs/migrations.md#from-flipt): VARIANT flags become flags whose variants are Flipt's (the
 * attachment as value, or the variant's key), BOOLEAN flags BOOLEAN flags, segments segments, and
 * rules, distributions and rollouts flagd's rules (flipt-rules.ts). The entity id is `targetingKey`.
 */

import type { FieldProblem } from '../errors.ts'
import { isJsonObject } from '../json-object.ts'
import { translateFliptBoolean, translateFliptVariant } from './flipt-flag.ts'
import { translateFliptSegment } from './flipt-segments.ts'
import { foreignFlagNames } from './foreign-flag-name.ts'
import type { ForeignTranslation, SkippedFlag, TranslateOptions, Translator } from './foreign-translation.ts'

const TOP_LEVEL = new Set(['version', 'namespace', 'flags', 'segments'])

/** Whether one parsed document is Flipt's: only its top-level fields, `flags` or `segments` a list. */
function isFliptDocument(raw: unknown): raw is Record<string, unknown> {
  if (!isJsonObject(raw)) return false
  const keys = Object.keys(raw)
  if (keys.length === 0 || !keys.every((k) => TOP_LEVEL.has(k))) return false
  if (raw.flags !== undefined && !Array.isArray(raw.flags)) return false
  if (raw.segments !== undefined && !Array.isArray(raw.segments)) return false
  if (raw.version !== undefined && (typeof raw.version !== 'string' || !/^1(\.\d+)?$/u.test(raw.version))) return false
  return Array.isArray(raw.flags) || Array.isArray(raw.segments)
}

/** Whether `raw` is a `flipt export` file (one document, or the stream of one per namespace). */
export function isFliptFile(raw: unknown): boolean {
  return Array.isArray(raw) ? raw.length > 0 && raw.every(isFliptDocument) : isFliptDocument(raw)
}

/** A document's namespace key (`default` when it names none). */
function namespaceOf(doc: Record<string, unknown>): string {
  const ns = doc.namespace
  if (typeof ns === 'string') return ns
  return isJsonObject(ns) && typeof ns.key === 'string' ? ns.key : 'default'
}

/** The document to read: the namespace `?sourceEnvironment=` names, else the first (said in `warnings`). */
function chosenDocument(raw: unknown, options: TranslateOptions, warnings: FieldProblem[]): Record<string, unknown> | FieldProblem[] {
  const docs = Array.isArray(raw) ? raw : [raw]
  if (!docs.every(isFliptDocument))
    return [{ field: 'body', reason: "not a Flipt export: expected Flipt's version, namespace, flags and segments" }]
  const namespaces = docs.map(namespaceOf)
  if (options.sourceEnvironment !== undefined) {
    const at = namespaces.indexOf(options.sourceEnvironment)
    if (at === -1)
      return [
        { field: 'sourceEnvironment', reason: `the file has no namespace ${options.sourceEnvironment} (it has ${namespaces.join(', ')})` },
      ]
    return docs[at] as Record<string, unknown>
  }
  if (docs.length > 1)
    warnings.push({
      field: 'sourceEnvironment',
      reason: `the file holds namespaces ${namespaces.join(', ')}: imported ${namespaces[0]}, the first`,
    })
  return docs[0] as Record<string, unknown>
}

/** Translates a Flipt export (see module comment). */
export const translateFlipt: Translator = (raw, options) => {
  const warnings: FieldProblem[] = []
  const doc = chosenDocument(raw, options, warnings)
  if (Array.isArray(doc)) return { problems: doc }
  const out: ForeignTranslation = { flags: {}, segments: {}, skipped: [], warnings, scheduled: [], environment: namespaceOf(doc) }
  const known = new Set<string>()
  const refused = new Map<string, string>()
  for (const s of Array.isArray(doc.segments) ? doc.segments : []) {
    if (!isJsonObject(s) || typeof s.key !== 'string') continue
    known.add(s.key)
    const segment = translateFliptSegment(s)
    if (segment.ok) out.segments[s.key] = { description: segment.description, rule: segment.rule }
    else refused.set(s.key, segment.reason)
  }
  const flags = (Array.isArray(doc.flags) ? doc.flags : []).filter(
    (f): f is Record<string, unknown> => isJsonObject(f) && typeof f.key === 'string',
  )
  const { names, skipped } = foreignFlagNames(flags.map((f) => f.key as string))
  out.skipped.push(...skipped)
  let split = false
  const used = new Set<string>()
  for (const flag of flags) {
    const key = flag.key as string
    const name = names.get(key)
    if (name === undefined) continue
    const type = flag.type ?? 'VARIANT_FLAG_TYPE'
    const result =
      type === 'BOOLEAN_FLAG_TYPE'
        ? translateFliptBoolean(flag, known, refused)
        : type === 'VARIANT_FLAG_TYPE'
          ? translateFliptVariant(flag, known, refused)
          : ({ ok: false, reason: `type ${String(type)} is not a flag type Flipt has` } as const)
    if (!result.ok) {
      out.skipped.push({ name: key, reason: result.reason } satisfies SkippedFlag)
      continue
    }
    split ||= result.split
    for (const s of result.segments) used.add(s)
    out.flags[name] = result.definition
  }
  // segments no imported flag uses are still imported when flagd can hold them
  if (split)
    warnings.push({
      field: 'percentages',
      reason: "Flipt's percentages keep their sizes, but flagd hashes differently: which entity ids fall in each share changes",
    })
  if (refused.size > 0)
    for (const [key, reason] of refused)
      if (!used.has(key)) warnings.push({ field: `segments.${key}`, reason: `segment not imported: ${reason}` })
  return out
}
