/**
 * What an import changes (docs/migrations.md): for `mode` merge|replace and `values` overwrite|keep, the
 * flags created, updated (with the fields that change) and deleted, and the problems that refuse the
 * whole import (a kept value that breaks new constraints, a flag/group collision with flags kept).
 */

import type { FieldProblem } from './errors.ts'
import { CONSTRAINT_FIELDS, definitionOf, type Flag, type FlagDefinition, LIFECYCLE_FIELDS, TARGETING_FIELDS } from './flag.ts'
import { valueProblem } from './flag-definition.ts'
import { indexNames } from './flag-name.ts'
import type { ImportedDefinition } from './import-document.ts'
import { newCheckBudget } from './regex-pattern.ts'
import { asWritten } from './rollout-written.ts'
import { sameJson } from './same-json.ts'

export type ImportMode = 'merge' | 'replace'
export type ImportValues = 'overwrite' | 'keep'

/** One flag the import creates, updates or deletes. */
export interface PlannedChange {
  name: string
  action: 'create' | 'update' | 'delete'
  fields: string[]
  definition?: ImportedDefinition
  /** For an update: the definition the flag has now. */
  previous?: FlagDefinition
}

/** The outcome of planning. */
export interface ImportPlan {
  changes: PlannedChange[]
  unchanged: number
  problems: FieldProblem[]
}

// every field a file can set: one it changes alone (a rule, the variants) is a change too
const FIELD_ORDER = [
  'type',
  'description',
  'defaultValue',
  'valueExists',
  'value',
  ...CONSTRAINT_FIELDS,
  ...TARGETING_FIELDS,
  ...LIFECYCLE_FIELDS,
]

/** Fields whose values differ between two definitions, in contract order. */
export function changedFields(a: FlagDefinition, b: FlagDefinition): string[] {
  const x = a as unknown as Record<string, unknown>
  const y = b as unknown as Record<string, unknown>
  // the order of an object's keys (variants, metadata, a rule) says nothing: docs/migrations.md#what-counts-as-a-change
  return FIELD_ORDER.filter((k) => !sameJson(x[k], y[k]))
}

/** `definition` archived (`archived: true`) or not (no such field): how a row stores it. */
function withArchived(definition: ImportedDefinition, archived: boolean): ImportedDefinition {
  const { archived: _given, ...rest } = definition
  return archived ? { ...rest, archived: true } : rest
}

/** How many flags a plan creates, updates, deletes and leaves unchanged. */
export function planSummary(plan: ImportPlan): { created: number; updated: number; deleted: number; unchanged: number } {
  const count = (action: PlannedChange['action']) => plan.changes.filter((c) => c.action === action).length
  return { created: count('create'), updated: count('update'), deleted: count('delete'), unchanged: plan.unchanged }
}

/**
 * Plans an import of `incoming` over the `current` flags. `holds`: whether the document's format
 * can hold a flag at all (flagd's cannot hold TAG flags); `replace` deletes only those it could.
 * `archivedKept`: the format cannot say whether a flag is archived (flagd's), so each keeps its state.
 */
export function planImport(
  current: ReadonlyMap<string, Flag>,
  incoming: ReadonlyMap<string, ImportedDefinition>,
  mode: ImportMode,
  values: ImportValues,
  holds: (flag: Flag) => boolean = () => true,
  archivedKept = false,
): ImportPlan {
  const changes: PlannedChange[] = []
  const problems: FieldProblem[] = []
  let unchanged = 0
  const budget = newCheckBudget() // kept values are checked against new patterns: one budget for all
  for (const name of [...incoming.keys()].sort()) {
    const given = incoming.get(name) as ImportedDefinition
    const existing = current.get(name)
    // archived as the file says; a document that cannot say (flagd's) keeps the flag's state (docs/migrations.md)
    const archived = archivedKept ? existing?.archived === true : given.archived === true
    const wanted = withArchived(given, archived)
    if (!existing) {
      changes.push({ name, action: 'create', fields: Object.keys(definitionOf(wanted)), definition: wanted })
      continue
    }
    let next = wanted
    if (values === 'keep') {
      next = withArchived(
        definitionOf({
          ...wanted,
          valueExists: existing.valueExists,
          ...(existing.valueExists ? { value: existing.value } : {}),
        } as FlagDefinition),
        archived,
      )
      if (existing.valueExists) {
        const why = valueProblem(wanted.type, existing.value, wanted, budget)
        if (why) problems.push({ field: `flags.${name}.value`, reason: `the kept value breaks the new definition: ${why}` })
      }
    }
    // a rollout compares by its written fields: what the server keeps on it is not in a file
    const fields = changedFields(asWritten(definitionOf(existing)), asWritten(definitionOf(next)))
    if (archived !== (existing.archived === true)) fields.push('archived')
    if (fields.length === 0) unchanged++
    else changes.push({ name, action: 'update', fields, definition: next, previous: definitionOf(existing) })
  }
  const absent = [...current.keys()].filter((n) => !incoming.has(n))
  // replace deletes what the file leaves out (and could have held); what stays must not collide
  const gone = mode === 'replace' ? absent.filter((n) => holds(current.get(n) as Flag)) : []
  for (const name of gone.sort()) changes.push({ name, action: 'delete', fields: [] })
  const deleted = new Set(gone)
  const kept = absent.filter((n) => !deleted.has(n))
  if (kept.length > 0) {
    const index = indexNames(kept)
    for (const name of incoming.keys()) {
      const other = index.collision(name)
      if (other !== undefined)
        problems.push({
          field: `flags.${name}`,
          reason: `collides with the existing flag ${other} (a name cannot be both a flag and a group)`,
        })
    }
  }
  changes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return { changes, unchanged, problems }
}

/** The rows an applied plan writes: flags to put (new ones with ids from `newFlagId`) and ids to delete. */
export interface PlanRows {
  put: Flag[]
  deleteIds: string[]
}

/** Turns a plan into rows over the `current` flags, stamping changes with `at`. */
export function applyPlan(current: ReadonlyMap<string, Flag>, plan: ImportPlan, at: string, newFlagId: () => string): PlanRows {
  const rows: PlanRows = { put: [], deleteIds: [] }
  for (const change of plan.changes) {
    const before = current.get(change.name)
    if (change.action === 'delete') {
      if (before) rows.deleteIds.push(before.id)
      continue
    }
    const definition = change.definition as ImportedDefinition
    const { archived, ...fields } = definition
    rows.put.push({
      id: before?.id ?? newFlagId(),
      name: change.name,
      ...fields,
      ...(archived === true ? { archived: true as const } : {}),
      createdAt: before?.createdAt ?? at,
      updatedAt: at,
      revision: before ? before.revision + 1 : 1,
    })
  }
  return rows
}

/** One segment an import creates, updates or deletes. */
export interface PlannedSegmentChange {
  name: string
  action: 'create' | 'update' | 'delete'
}

/**
 * What an import does to segments (docs/targeting.md#rules: merge and replace apply to them as to flags):
 * the document's segments are created or replaced; with `replace`, the others are deleted.
 */
export function planSegments(
  current: ReadonlyMap<string, { description: string; rule: unknown }>,
  incoming: ReadonlyMap<string, { description: string; rule: unknown }>,
  mode: ImportMode,
): PlannedSegmentChange[] {
  const out: PlannedSegmentChange[] = []
  for (const [name, wanted] of incoming) {
    const existing = current.get(name)
    if (!existing) out.push({ name, action: 'create' })
    else if (existing.description !== wanted.description || !sameJson(existing.rule, wanted.rule)) out.push({ name, action: 'update' })
  }
  if (mode === 'replace') for (const name of current.keys()) if (!incoming.has(name)) out.push({ name, action: 'delete' })
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
