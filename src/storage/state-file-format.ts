/**
 * The state file (`<dataDir>/flagd.json`): its format, the checks applied when it is loaded, and the
 * upgrade of older formats. A file that fails the checks stops start-up naming the bad record: state
 * is never silently reset.
 *
 * Version 2: `{schemaVersion, revision, revisions, flags, users, sessions, tokens}`, every table an
 * object keyed by row id. Version 1 (the first release) keyed flags by name, had no flag ids, no
 * tokens and no revisions; it is upgraded on open (see `openJsonFileStore`). Version 6 stores every
 * environment's state of a flag alike, in `states` (docs/environments.md#how-flags-are-stored).
 */

import { DEFAULT_ENVIRONMENT } from '../domain/environment.ts'
import { isJsonObject as isPlainObject } from '../domain/json-object.ts'
import { newId } from '../domain/new-id.ts'
import { ownValue, setOwn } from '../domain/own-property.ts'
import { CorruptStateError } from './corrupt-state-error.ts'
import { homeOfOldRows, upgradeEnvironmentRow, upgradeFlagRow } from './flag-row-upgrade.ts'
import { emptyStateData, type StateData, stateFromRows } from './memory-state.ts'
import { checkRows, isTime } from './state-row-checks.ts'
import { type LastUsed, SCHEMA_VERSION, stateChunks } from './state-text-builder.ts'
import { type Rows, TABLES, type Table } from './store.ts'

export { CorruptStateError }

/** Rewrites a version-1 object into version 2: flags get ids and are keyed by them; tokens appear. */
function upgradeFromV1(path: string, raw: Record<string, unknown>): Record<string, unknown> {
  if (!isPlainObject(raw.flags)) throw new CorruptStateError(path, 'its "flags" is missing or not an object')
  const flags: Record<string, unknown> = {}
  for (const [name, flag] of Object.entries(raw.flags)) {
    if (!isPlainObject(flag)) throw new CorruptStateError(path, `record flags[${JSON.stringify(name)}] is not an object`)
    const id = newId('flg')
    flags[id] = { id, ...flag, name }
  }
  return {
    schemaVersion: 2,
    revision: 0,
    revisions: { flags: 0, users: 0, sessions: 0, tokens: 0 },
    flags,
    users: raw.users,
    sessions: raw.sessions,
    tokens: {},
  }
}

/** `table` with each object row passed through `upgrade` (other values left for the checks to name). */
function mapRows(table: Record<string, unknown>, upgrade: (row: Record<string, unknown>) => Record<string, unknown>) {
  const out: Record<string, unknown> = {}
  for (const [id, row] of Object.entries(table)) setOwn(out, id, isPlainObject(row) ? upgrade(row) : row)
  return out
}

/**
 * Moves the rows of a file older than version 6 to every environment's state stored alike, after
 * checking they are in the old shape (docs/environments.md#how-flags-are-stored): one environment
 * at most marked home, and every flag row's own state whole. The environment given the own fields
 * is marked the default, so the daemon's start keeps that state rather than copying another's over it.
 */
function upgradeToV6(path: string, v2: Record<string, unknown>, environment: string): void {
  const environments = v2.environments as Record<string, unknown>
  const homes = Object.keys(environments).filter((id) => {
    const row = environments[id]
    return isPlainObject(row) && row.home === true
  })
  if (homes.length > 1) {
    const [first, second] = homes.map((id) => `environments[${JSON.stringify(id)}]`)
    throw new CorruptStateError(path, `record ${second} is marked home, as is ${first}`)
  }
  for (const [id, row] of Object.entries(v2.flags as Record<string, unknown>)) {
    if (!isPlainObject(row)) continue // named by the checks
    const where = `flags[${JSON.stringify(id)}]`
    if (!Object.hasOwn(row, 'valueExists') || typeof row.valueExists !== 'boolean')
      throw new CorruptStateError(path, `record ${where} has a missing or invalid "valueExists"`)
    if (Object.hasOwn(row, 'states') && !isPlainObject(row.states))
      throw new CorruptStateError(path, `record ${where} has a missing or invalid "states"`)
  }
  const home = homeOfOldRows(Object.values(environments), environment)
  const upgraded = mapRows(environments, upgradeEnvironmentRow)
  // no environment was home: the configured default now holds the own fields; marked so, and made if
  // missing (as old as the oldest environment), the start does not replace its state by a copy
  if (homes.length === 0 && Object.keys(environments).length > 0) {
    const existing = ownValue(upgraded, home)
    const times = Object.values(environments).flatMap((row) =>
      isPlainObject(row) && isTime(row.createdAt) ? [row.createdAt as string] : [],
    )
    const at = times.sort()[0] ?? new Date(0).toISOString()
    const base = { id: home, name: home, description: '', protected: false, requiredApprovals: 0, createdAt: at, updatedAt: at }
    setOwn(upgraded, home, isPlainObject(existing) ? { ...existing, default: true } : { ...base, default: true })
  }
  v2.environments = upgraded
  v2.flags = mapRows(v2.flags as Record<string, unknown>, (row) => upgradeFlagRow(row, home))
}

/** A loaded state file: its data, and the version it was written in (1 means: upgrade it). */
export interface LoadedState {
  data: StateData
  fromVersion: number
}

/**
 * Parses and checks a state file's text; throws `CorruptStateError` naming the problem.
 * `environment`: the default one, whose state the flags of a file from before environments become.
 */
export function parseStateFile(path: string, text: string, environment = DEFAULT_ENVIRONMENT): LoadedState {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new CorruptStateError(path, `it is not valid JSON (${(err as Error).message})`)
  }
  if (!isPlainObject(raw)) throw new CorruptStateError(path, 'it is not a JSON object')
  const version = raw.schemaVersion
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1)
    throw new CorruptStateError(path, 'it has no valid schemaVersion')
  if (version > SCHEMA_VERSION) {
    throw new CorruptStateError(path, `it has schemaVersion ${version}, written by a newer flagd (this one reads up to ${SCHEMA_VERSION})`)
  }
  const v2 = version === 1 ? upgradeFromV1(path, raw) : raw
  // version 3 added segments (docs/targeting.md#rules): older files have none
  if (version < 3 && v2.segments === undefined) {
    v2.segments = {}
    if (isPlainObject(v2.revisions)) v2.revisions = { ...v2.revisions, segments: 0 }
  }
  // version 4 added environments (docs/environments.md): older files have none; the daemon makes
  // the default one at start
  if (version < 4 && v2.environments === undefined) {
    v2.environments = {}
    if (isPlainObject(v2.revisions)) v2.revisions = { ...v2.revisions, environments: 0 }
  }
  // version 5 added change requests (docs/change-control.md): older files have none
  if (version < 5 && v2.changeRequests === undefined) {
    v2.changeRequests = {}
    if (isPlainObject(v2.revisions)) v2.revisions = { ...v2.revisions, changeRequests: 0 }
  }
  // version 6 stores every environment's state alike: the own fields of a row become the state of
  // the environment marked home (of the default one, in a file from before environments)
  if (version < 6 && isPlainObject(v2.flags) && isPlainObject(v2.environments)) upgradeToV6(path, v2, environment)
  const revisions = v2.revisions as Record<Table, number> | undefined
  const counters = [v2.revision, ...TABLES.map((t) => revisions?.[t])]
  if (!isPlainObject(revisions) || !counters.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) {
    throw new CorruptStateError(path, 'its revision counters are missing or invalid')
  }
  const rows = Object.fromEntries(TABLES.map((t) => [t, checkRows(path, t, v2[t])])) as { [T in Table]: Rows[T][] }
  const storeId = v2.storeId
  if (storeId !== undefined && (typeof storeId !== 'string' || !STORE_ID.test(storeId)))
    throw new CorruptStateError(path, 'its "storeId" is not a valid store id')
  try {
    const data = stateFromRows(rows, v2.revision as number, revisions)
    return { data: storeId === undefined ? data : { ...data, storeId }, fromVersion: version }
  } catch (err) {
    throw new CorruptStateError(path, (err as Error).message.replace('store invariant: ', 'two records share a name: '))
  }
}

/** The file text of `data`, built whole; `lastUsed` supplies the in-memory last use of sessions and tokens. */
export function serializeState(data: StateData, lastUsed: LastUsed): string {
  return [...stateChunks(data, lastUsed)].join('')
}

/** The text of a new, empty state file. */
export function emptyStateText(): string {
  return serializeState({ ...emptyStateData(), storeId: newStoreId() }, () => undefined)
}

const STORE_ID = /^sto_[A-Za-z0-9_-]{8,64}$/

/** A new identity for a file store: its change journal's lines carry it, so another directory's journal is never replayed. */
export function newStoreId(): string {
  return newId('sto')
}
