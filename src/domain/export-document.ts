/**
 * The export document of a migration file (docs/migrations.md): built from an allow-list of flag
 * fields, in a fixed order, with its file text and file name.
 */

import { definitionOf, type Flag, type FlagDefinition, type JsonObject } from './flag.ts'
import { rolloutRead } from './rollout-status.ts'
import type { Segment } from './segment.ts'
import { utcStamp } from './utc-stamp.ts'

/** The version of the migration format this flagd writes. */
export const EXPORT_VERSION = '1.0.0'

/** One flag as it appears in an export file. */
export type ExportedFlag = Omit<FlagDefinition, 'type'> & { type: FlagDefinition['type']; archived?: true }

/** The export document. */
export interface ExportDocument {
  environment: string
  version: string
  createdAt: string
  flags: Record<string, ExportedFlag>
  /** Only when there are any (docs/targeting.md#rules). */
  segments?: Record<string, ExportedSegment>
}

/** A segment as it appears in an export file. */
export interface ExportedSegment {
  description: string
  rule: JsonObject
}

/**
 * One flag in export order: description, type, defaultValue, valueExists, value, constraints; a
 * rollout as reads show it at `nowMs` (docs/guarded-rollouts.md#status-and-percent); `archived: true`
 * when it is (docs/api.md#archive).
 */
export function exportFlag(f: FlagDefinition & { archived?: true }, nowMs: number): ExportedFlag {
  const { type, description, ...rest } = definitionOf(f)
  if (rest.rollout !== undefined) (rest as Record<string, unknown>).rollout = rolloutRead(rest.rollout, nowMs)
  return { description, type, ...rest, ...(f.archived === true ? { archived: true as const } : {}) }
}

/** The export document of `flags` and `segments` (given in name order). Nothing but flags and segments ever goes into it. */
export function buildExportDocument(
  flags: readonly Flag[],
  environment: string,
  now: Date,
  segments: readonly Segment[] = [],
): ExportDocument {
  const doc: ExportDocument = {
    environment,
    version: EXPORT_VERSION,
    createdAt: now.toISOString(),
    flags: exportedFlags(flags, now.getTime()),
  }
  if (segments.length > 0) doc.segments = exportedSegments(segments)
  return doc
}

/** The `segments` member of an export. */
export function exportedSegments(segments: readonly Segment[]): Record<string, ExportedSegment> {
  return Object.fromEntries(segments.map((s) => [s.name, { description: s.description, rule: s.rule }]))
}

/** The `flags` member of an export: each flag by name, in the given order. */
function exportedFlags(flags: readonly Flag[], nowMs: number): Record<string, ExportedFlag> {
  const out: Record<string, ExportedFlag> = {}
  for (const f of flags) out[f.name] = exportFlag(f, nowMs)
  return out
}

/** The export document as file text: indented for people and diffs, ending in a newline. */
export function exportText(document: ExportDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`
}

/** The `flags` member of an export's file text at `nowMs`, indented as `exportText` places it. */
export function exportFlagsText(flags: readonly Flag[], nowMs: number): string {
  return JSON.stringify(exportedFlags(flags, nowMs), null, 2).replaceAll('\n', '\n  ')
}

/** The same text as `exportText`, around a `flags` part made once by `exportFlagsText` (and the segments, if any). */
export function exportTextWithFlags(environment: string, at: Date, flagsText: string, segments: readonly Segment[] = []): string {
  const head = JSON.stringify({ environment, version: EXPORT_VERSION, createdAt: at.toISOString() }, null, 2)
  const tail =
    segments.length === 0 ? '' : `,\n  "segments": ${JSON.stringify(exportedSegments(segments), null, 2).replaceAll('\n', '\n  ')}`
  return `${head.slice(0, -2)},\n  "flags": ${flagsText}${tail}\n}\n`
}

/** `flagd_migration_<ENVIRONMENT>_<YYYYMMDD-HHMMSS>.json` (UTC). */
export function exportFileName(environment: string, at: Date): string {
  return `flagd_migration_${environment}_${utcStamp(at)}.json`
}
