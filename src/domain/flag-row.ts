/**
 * The stored flag (docs/environments.md#how-flags-are-stored): the definition every environment
 * shares, and each environment's state by name, the default one's among them. Nothing outside the
 * store works on rows: engines, caches and routes work on `Flag`, a view of one environment, which
 * `flagIn` makes.
 */

import { type FlagState, STATE_FIELDS, type StateField, sharedOf, stateOf } from './environment.ts'
import type { Flag } from './flag.ts'
import { ownValue, setOwn } from './own-property.ts'

/** A stored flag: the shared definition, every environment's state, and the revisions each environment last saw it change at. */
export type FlagRow = Omit<Flag, StateField | 'servedRevision'> & {
  /** Every environment's state, by environment name. */
  readonly states: Readonly<Record<string, FlagState>>
  /**
   * The revision at which each environment's view of the flag last changed, for the environments
   * where that is older than `revision` (a later change was confined to other environments). What
   * OFREP shows as `metadata.revision` and bulk ETags move with (docs/environments.md#revisions).
   */
  readonly servedRevisions?: Readonly<Record<string, number>>
}

/** The state of an environment a row holds none for (one made since, before its copy landed): the type's defaults. */
export const BLANK_STATE: FlagState = Object.freeze({ valueExists: false, enabled: true })

/** Environment `env`'s state in `row` (the type's defaults when it holds none). */
export function stateIn(row: FlagRow, env: string): FlagState {
  return ownValue(row.states, env) ?? BLANK_STATE
}

/** The shared part of a view or row: every field but the per-environment ones and the served revisions. */
function sharedFields(flag: Flag | FlagRow): Record<string, unknown> {
  const out: Record<string, unknown> = { ...flag }
  for (const field of STATE_FIELDS) delete out[field]
  delete out.states
  delete out.servedRevisions
  delete out.servedRevision
  return out
}

/** The flag `row` as environment `env` sees it: the shared definition, `env`'s state, and the revision `env` last saw it change at. */
export function flagIn(row: FlagRow, env: string): Flag {
  const view: Record<string, unknown> = { ...sharedFields(row), ...stateIn(row, env) }
  const served = ownValue(row.servedRevisions, env)
  if (served !== undefined) view.servedRevision = served
  return Object.freeze(view) as unknown as Flag
}

/** A row of `view`'s shared definition holding `states` (servedRevisions left to `stampServed`). */
export function rowOf(view: Flag | FlagRow, states: Readonly<Record<string, FlagState>>): FlagRow {
  return { ...sharedFields(view), states } as unknown as FlagRow
}

/** `row` with `state` as environment `env`'s, every other environment's kept. */
export function withStateIn(row: FlagRow, env: string, state: FlagState): FlagRow {
  const states: Record<string, FlagState> = { ...row.states }
  setOwn(states, env, state)
  return { ...row, states }
}

/** A row holding `view`'s state in every one of `envs`: a flag the same everywhere. */
export function rowEverywhere(view: Flag, envs: Iterable<string>): FlagRow {
  const states: Record<string, FlagState> = {}
  const state = stateOf(view)
  for (const env of envs) setOwn(states, env, state)
  return rowOf(view, states)
}

/** The revision `env` last saw `row` change at. */
export function servedRevisionOf(row: FlagRow, env: string): number {
  return ownValue(row.servedRevisions, env) ?? row.revision
}

/**
 * `next` (a new revision of `previous`) with `servedRevisions` saying which environments' views it
 * moved (docs/environments.md#revisions): a shared field or a rename moves every one; a state only
 * its own environment. The others keep the revision they last changed at. Without `previous` (a new
 * flag) every view is new.
 */
export function stampServed(previous: FlagRow | undefined, next: FlagRow): FlagRow {
  const { servedRevisions: _old, ...bare } = next
  if (previous === undefined) return bare
  const sharedMoved = previous.name !== next.name || JSON.stringify(sharedOf(previous)) !== JSON.stringify(sharedOf(bare))
  if (sharedMoved) return bare
  const kept: Record<string, number> = {}
  for (const env of Object.keys(next.states)) {
    const same = JSON.stringify(stateIn(previous, env)) === JSON.stringify(stateIn(next, env))
    if (same) setOwn(kept, env, servedRevisionOf(previous, env))
  }
  return Object.keys(kept).length === 0 ? bare : { ...bare, servedRevisions: kept }
}

/** `row` at a new revision that every environment sees (a segment it uses changed): no view is older. */
export function revisedEverywhere(row: FlagRow, at: string): FlagRow {
  const { servedRevisions: _old, ...bare } = row
  return { ...bare, updatedAt: at, revision: row.revision + 1 }
}
