/**
 * Writing an import inside its transaction (docs/migrations.md, docs/targeting.md#rules): the document's segments first (so
 * the flags that refer to them find them), then the flags, then the segments a `replace` deletes.
 * Flags whose answers depend on a replaced segment and that the import does not rewrite itself get
 * a new revision, as a segment change through the API gives them. Every rule written is checked
 * against the segments the transaction ends with, so no flag is left with a dangling reference.
 */

import { InvalidError } from '../domain/errors.ts'
import type { ExportedSegment } from '../domain/export-document.ts'
import { type FlagRow, revisedEverywhere } from '../domain/flag-row.ts'
import { applyPlan, type ImportPlan, type PlannedSegmentChange } from '../domain/migration-plan.ts'
import { newId } from '../domain/new-id.ts'
import type { Principal } from '../domain/principal.ts'
import { referencedSegments, type Segment } from '../domain/segment.ts'
import { sealedForProtected } from '../domain/write-guard.ts'
import type { Tx } from '../storage/store.ts'
import { flagsInDraft } from './environment-views.ts'
import { bornIn, carryStates } from './flag-states.ts'
import { flagsDependingOn, rulesOf } from './segment-service.ts'

/**
 * Applies a planned import to `tx` at time `at`; `env`: the environment whose state the plan's
 * per-environment fields set, the plan having been made against its views; `onlyThere`: a new flag
 * gets that state there only, the type's defaults elsewhere (an import naming an environment, the
 * default one too), else everywhere (docs/environments.md#export-and-import).
 */
export function applyImport(
  tx: Tx,
  flagPlan: ImportPlan,
  segmentPlan: readonly PlannedSegmentChange[],
  segments: ReadonlyMap<string, ExportedSegment>,
  at: string,
  env: string,
  onlyThere: boolean,
  principal: Principal,
): void {
  const replaced = new Set<string>()
  for (const change of segmentPlan) {
    if (change.action === 'delete') continue
    const wanted = segments.get(change.name) as ExportedSegment
    const current = tx.read.segments.get(change.name)
    const segment: Segment = current
      ? { ...current, description: wanted.description, rule: wanted.rule, updatedAt: at, revision: current.revision + 1 }
      : {
          id: newId('seg'),
          name: change.name,
          description: wanted.description,
          rule: wanted.rule,
          createdAt: at,
          updatedAt: at,
          revision: 1,
        }
    tx.put('segments', segment)
    if (current && JSON.stringify(current.rule) !== JSON.stringify(wanted.rule)) replaced.add(change.name)
  }
  const rows = applyPlan(flagsInDraft(tx.read, env), flagPlan, at, () => newId('flg'))
  for (const id of rows.deleteIds) tx.delete('flags', id)
  for (const flag of rows.put) {
    const previous = tx.read.row('flags', flag.id)
    const row = previous === undefined && onlyThere ? bornIn(tx.read, flag, env) : carryStates(tx.read, flag, previous, env)
    // a new flag starts disabled, with no value, in a protected environment (docs/change-control.md#protected-environments)
    tx.put('flags', previous === undefined ? sealedForProtected(row, tx.read.environments, principal) : row)
  }
  const written = new Set(rows.put.map((f) => f.id))
  const bumped = new Map<string, FlagRow>()
  for (const name of replaced)
    for (const flag of flagsDependingOn(tx.read, name))
      if (!written.has(flag.id) && !bumped.has(flag.id)) bumped.set(flag.id, revisedEverywhere(flag, at))
  for (const flag of bumped.values()) tx.put('flags', flag)
  for (const change of segmentPlan) {
    const current = tx.read.segments.get(change.name)
    if (change.action === 'delete' && current) tx.delete('segments', current.id)
  }
  for (const flag of tx.read.flags.values())
    for (const name of rulesOf(flag).flatMap((rule) => referencedSegments(rule)))
      if (!tx.read.segments.has(name))
        throw new InvalidError(`flag ${flag.name} refers to segment ${name}, which the import leaves out`, `flags.${flag.name}.targeting`)
  for (const segment of tx.read.segments.values())
    for (const name of referencedSegments(segment.rule))
      if (!tx.read.segments.has(name))
        throw new InvalidError(
          `segment ${segment.name} refers to segment ${name}, which the import leaves out`,
          `segments.${segment.name}.rule`,
        )
}
