/**
 * A flagd document this daemon exported, imported back (docs/migrations.md#flagd-round-trip): the
 * flagd format cannot say everything a flag holds (its description, constraints, ENUM and A/B
 * types, a rollout as such, segments that refer to segments), so reading a flag from it anew would
 * change what it cannot carry. A flag (or segment) of the document that is exactly what the export
 * of the environment imported into says of it now (its `metadata.revision` aside, keys in any
 * order) is read as the flag (or segment) as it is: re-importing an export changes nothing.
 */

import type { ExportedSegment } from './export-document.ts'
import { definitionOf, type Flag, type FlagDefinition } from './flag.ts'
import { expandRefs, prerequisiteScope } from './flagd-document.ts'
import { isJsonObject } from './json-object.ts'
import { sameJson } from './same-json.ts'
import type { Segment } from './segment.ts'

/** A flagd flag without its `metadata.revision` (which every change moves). */
function withoutRevision(flag: unknown): unknown {
  if (!isJsonObject(flag) || !isJsonObject(flag.metadata)) return flag
  const { revision: _r, ...metadata } = flag.metadata
  return { ...flag, metadata }
}

/** `incoming` with each flag whose document entry (`raw`) is its export now (from `views`) replaced by the flag as it is. */
export function ownExportFlags(
  incoming: ReadonlyMap<string, FlagDefinition>,
  raw: ReadonlyMap<string, unknown>,
  views: ReadonlyMap<string, Flag>,
  rules: ReadonlyMap<string, unknown> = new Map(),
): Map<string, FlagDefinition> {
  const out = new Map(incoming)
  // prerequisites are written into the rules as the export writes them (docs/targeting.md#prerequisites-in-flagd-format)
  const scope = prerequisiteScope(views, rules)
  for (const name of incoming.keys()) {
    const view = views.get(name)
    const exported = view && scope.flagdOf(name)
    if (exported !== undefined && sameJson(withoutRevision(exported), withoutRevision(raw.get(name))))
      out.set(name, definitionOf(view as Flag))
  }
  return out
}

/** `incoming` (a document's `$evaluators`) with each one that is a segment's export now replaced by the segment as it is. */
export function ownExportSegments(
  incoming: ReadonlyMap<string, ExportedSegment>,
  segments: ReadonlyMap<string, Segment>,
  rules: ReadonlyMap<string, unknown>,
): Map<string, ExportedSegment> {
  const out = new Map(incoming)
  const expanded = new Map<string, unknown>()
  for (const [name, wanted] of incoming) {
    const current = segments.get(name)
    if (current !== undefined && sameJson(expandRefs({ $ref: name }, rules, expanded), wanted.rule))
      out.set(name, { description: current.description, rule: current.rule as ExportedSegment['rule'] })
  }
  return out
}
