/**
 * The checks every stored row passes before flagd serves it, whether it comes from the state file or
 * from the change journal replayed over it: enough fields of the right kind to answer without a 500.
 */

import { nameProblem } from '../domain/flag-name.ts'
import { isJsonObject as isPlainObject } from '../domain/json-object.ts'
import { CorruptStateError } from './corrupt-state-error.ts'
import type { Rows, Table } from './store.ts'

const isText = (v: unknown) => typeof v === 'string'
export const isTime = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v))
const isStringList = (v: unknown) => Array.isArray(v) && v.every(isText)

/** Fields every row of a table must have, with their checks (enough to serve it without a 500). */
const REQUIRED: Record<Table, Record<string, (v: unknown) => boolean>> = {
  flags: {
    name: (v) => nameProblem(v) === undefined,
    type: isText,
    description: isText,
    // every environment's state (docs/environments.md#how-flags-are-stored)
    states: (v) => isPlainObject(v) && Object.values(v).every((s) => isPlainObject(s) && typeof s.valueExists === 'boolean'),
    defaultValue: (v) => v !== undefined, // null: no default (docs/targeting.md#flagd-format)
    createdAt: isTime,
    updatedAt: isTime,
    revision: (v) => Number.isSafeInteger(v) && (v as number) >= 1,
  },
  users: { username: isText, passwordHash: isText, permissions: isStringList, createdAt: isTime, updatedAt: isTime },
  sessions: { userId: isText, createdAt: isTime, expiresAt: isTime, lastUsedAt: isTime },
  tokens: {
    name: isText,
    secretHash: (v) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v),
    permissions: isStringList,
    flagPrefixes: isStringList,
    createdAt: isTime,
    createdBy: (v) => isPlainObject(v) && isText(v.type) && isText(v.id) && isText(v.name),
    expiresAt: (v) => v === null || isTime(v),
    lastUsedAt: (v) => v === null || isTime(v),
  },
  segments: {
    name: isText,
    description: isText,
    rule: isPlainObject,
    createdAt: isTime,
    updatedAt: isTime,
    revision: (v) => Number.isSafeInteger(v) && (v as number) >= 1,
  },
  environments: {
    name: isText,
    description: isText,
    protected: (v) => typeof v === 'boolean',
    requiredApprovals: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
    color: (v) => v === undefined || isText(v),
    createdAt: isTime,
    updatedAt: isTime,
  },
  changeRequests: {
    environment: isText,
    title: isText,
    state: isText,
    author: (v) => isPlainObject(v) && isText(v.type) && isText(v.id) && isText(v.name),
    changes: Array.isArray,
    approvals: Array.isArray,
    createdAt: isTime,
    updatedAt: isTime,
    revision: (v) => Number.isSafeInteger(v) && (v as number) >= 1,
  },
}

/** Checks one stored row of `table` under `id` (`where` names it in the error); throws `CorruptStateError`. */
export function checkRow(path: string, table: Table, id: string, row: unknown, where = `${table}[${JSON.stringify(id)}]`): Rows[Table] {
  if (!isPlainObject(row)) throw new CorruptStateError(path, `record ${where} is not an object`)
  if (row.id !== id) throw new CorruptStateError(path, `record ${where} has id ${JSON.stringify(row.id)}, not its key`)
  // an environment's name is its id (docs/environments.md)
  if (table === 'environments' && row.name !== id)
    throw new CorruptStateError(path, `record ${where} has name ${JSON.stringify(row.name)}, not its id`)
  for (const [field, ok] of Object.entries(REQUIRED[table])) {
    if (!ok(row[field])) throw new CorruptStateError(path, `record ${where} has a missing or invalid "${field}"`)
  }
  return row as unknown as Rows[Table]
}

/** Checks every row of a table object of a state file; throws `CorruptStateError` naming the first bad one. */
export function checkRows(path: string, table: Table, raw: unknown): Rows[Table][] {
  if (!isPlainObject(raw)) throw new CorruptStateError(path, `its "${table}" is missing or not an object`)
  return Object.entries(raw).map(([id, row]) => checkRow(path, table, id, row))
}
