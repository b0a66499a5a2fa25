/**
 * Reading the audit log and rolling a flag back (docs/api.md#audit-log). The log itself is written by the
 * store, in the same commit as each change; this service only reads it, and a rollback is an
 * ordinary flag update (validated, `If-Match` honoured) recorded with the source `rollback`.
 */

import {
  can,
  canSeeFlag,
  canSomewhere,
  flagScopeOf,
  requireFlagInScope,
  requirePermission,
  requirePermissionSomewhere,
  requireUnscoped,
} from '../domain/access-policy.ts'
import type { AuditEntry } from '../domain/audit-entry.ts'
import { STATE_FIELDS } from '../domain/environment.ts'
import { InvalidError, NotFoundError } from '../domain/errors.ts'
import { type Flag, type FlagType, TYPE_CONSTRAINTS } from '../domain/flag.ts'
import { parseIsoInstant } from '../domain/iso-instant.ts'
import type { Caller, Principal } from '../domain/principal.ts'
import type { AuditQuery, Store } from '../storage/store.ts'
import { readableEnvironments, requireIn } from './environment-access.ts'
import type { FlagService, IfMatch } from './flag-service.ts'
import { findUserByName } from './user-service.ts'

/** The filters of `GET /api/audit`, as strings from the query (or the CLI). */
export interface AuditFilter {
  flag?: string | undefined
  actor?: string | undefined
  action?: string | undefined
  since?: string | undefined
  until?: string | undefined
  limit?: string | number | undefined
  before?: string | number | undefined
  /** The entries that moved this environment's state (`404` for an unknown one). */
  environment?: string | undefined
}

/** A page of entries, newest first; `nextBefore` when more remain. */
export interface AuditPage {
  entries: AuditEntry[]
  nextBefore?: number
}

/** The audit use cases. */
export interface AuditService {
  list(principal: Principal, filter: AuditFilter): Promise<AuditPage>
  /** `env`: the environment to restore (default: the one the entry changed, else the default one). */
  rollback(caller: Caller, name: unknown, revision: unknown, ifMatch?: IfMatch, env?: string): Promise<Flag>
}

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000

function integerIn(value: string | number | undefined, field: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined
  const n = typeof value === 'number' ? value : /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new InvalidError(`${field} must be a whole number from ${min} to ${max}`, field, `must be a whole number from ${min} to ${max}`)
  return n
}

function timeIn(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined
  const at = parseIsoInstant(value)
  if (at === undefined)
    throw new InvalidError(`${field} must be an ISO 8601 date or date-time with a zone`, field, 'must be an ISO 8601 date-time')
  return at
}

/** The most bytes of stored entries one page of `GET /api/audit` reads (the next page goes on from there). */
export const AUDIT_PAGE_BYTES = 4 * 1024 * 1024

/**
 * The actor id a filter names: an id as it is (`usr_…`, `tok_…`, `cli`), else a username or a token's
 * name, so a person can filter by what they know.
 */
function actorIdOf(store: Store, actor: string): string {
  const committed = store.committed()
  if (committed.users.has(actor) || committed.tokens.has(actor)) return actor
  const user = findUserByName(committed, actor)
  if (user) return user.id
  for (const t of committed.tokens.values()) if (t.name === actor) return t.id
  return actor
}

/** Every flag name an entry shows: its target's, and the name before and after the change. */
function namesOf(e: AuditEntry): string[] {
  if (e.target.type !== 'flag') return []
  const out = e.target.name === undefined ? [] : [e.target.name]
  for (const side of [e.before, e.after]) if (side && typeof side.name === 'string') out.push(side.name)
  return out
}

/** A flag entry without the per-environment fields of the views it shows: what it says of the shared definition. */
function definitionOnly(e: AuditEntry): AuditEntry {
  if (e.target.type !== 'flag') return e
  const bare = (view: Record<string, unknown> | null) => {
    if (view === null) return null
    const out = { ...view }
    for (const field of STATE_FIELDS) delete out[field]
    return out
  }
  return { ...e, before: bare(e.before), after: bare(e.after) }
}

/** Creates the service. */
export function createAuditService(store: Store, flags: FlagService, defaultEnvironment: string): AuditService {
  return {
    async list(principal, filter) {
      // the history of one flag is open to its readers (of the environments they may read); the
      // whole log needs audit:read
      const asReader = filter.flag !== undefined && !can(principal, 'audit:read')
      if (asReader) requirePermissionSomewhere(principal, 'flag:read')
      else requirePermission(principal, 'audit:read')
      const env = filter.environment
      if (env !== undefined && !store.committed().environments.has(env))
        throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
      if (asReader && env !== undefined) requireIn(principal, 'flag:read', env)
      const readable = asReader ? readableEnvironments(principal) : undefined
      const limit = integerIn(filter.limit, 'limit', 1, MAX_LIMIT) ?? DEFAULT_LIMIT
      const query: AuditQuery = { limit: limit + 1 }
      const before = integerIn(filter.before, 'before', 1, Number.MAX_SAFE_INTEGER)
      if (before !== undefined) query.beforeId = before
      const since = timeIn(filter.since, 'since')
      const until = timeIn(filter.until, 'until')
      if (since !== undefined) query.sinceMs = since
      if (until !== undefined) query.untilMs = until
      if (filter.actor !== undefined) query.actorId = actorIdOf(store, filter.actor)
      if (filter.action !== undefined) query.actionPrefix = filter.action
      if (env !== undefined) query.environment = env
      if (filter.flag !== undefined) {
        if (!canSeeFlag(principal, filter.flag)) return { entries: [] }
        const current = store.committed().flags.get(filter.flag)
        if (current) query.flagIds = [current.id]
        else query.name = filter.flag
      } else requireUnscoped(principal, 'the whole audit log spans every flag (name one with ?flag=)')
      // a page of large entries stops at AUDIT_PAGE_BYTES, and the store says when it did
      const entries = await store.audit.query({ ...query, maxBytes: AUDIT_PAGE_BYTES })
      const more = entries.length > limit || entries.truncated === true
      const page = entries.length > limit ? entries.slice(0, limit) : entries
      // a confined token sees an entry only when every flag name in it is inside its prefixes: the
      // history of a flag renamed out of them stops where it left (its new name and values stay hidden)
      const inScope = flagScopeOf(principal).length === 0 ? page : page.filter((e) => namesOf(e).every((n) => canSeeFlag(principal, n)))
      // a reader of some environments sees shared changes and those of the environments it reads;
      // a shared entry shows the flag as some environment saw it, so it sees only its definition
      // (docs/environments.md#audit); one who reads every environment, one by one, sees it whole
      const partial = readable !== undefined && [...store.committed().environments.keys()].some((e) => !readable.has(e))
      const shown = !partial
        ? inScope
        : inScope
            .filter((e) => e.environment == null || readable.has(e.environment))
            .map((e) => (e.environment == null ? definitionOnly(e) : e))
      return more ? { entries: shown, nextBefore: (page.at(-1) as AuditEntry).id } : { entries: shown }
    },

    async rollback(caller, name, revision, ifMatch, env) {
      // the update decides: the environment's permission for its state, the unscoped one for shared fields
      requirePermissionSomewhere(caller.principal, 'flag:write')
      if (typeof name !== 'string' || name === '') throw new InvalidError('name is required', 'name', 'required')
      if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 1) {
        throw new InvalidError('revision must be a whole number from 1', 'revision', 'must be a whole number from 1')
      }
      requireFlagInScope(caller.principal, name)
      const current = store.committed().flags.get(name)
      if (!current) throw new NotFoundError(`no flag named ${JSON.stringify(name)}`)
      const entry = await store.audit.flagRevision(current.id, revision)
      const was = entry?.after
      if (!was)
        throw new NotFoundError(`flag ${name} has no revision ${revision} in the audit log (it never existed, or is past retention)`)
      const target = env ?? entry?.environment ?? defaultEnvironment
      const environments = store.committed().environments
      if (!environments.has(target)) throw new NotFoundError(`no environment named ${JSON.stringify(target)}`)
      // the view copied and the view answered must both be the caller's to read (docs/environments.md#audit);
      // a write-only holder, whom every write answers the view it writes, to write. A shared entry
      // does not say which environment its view came from, so it needs every one
      const needs = canSomewhere(caller.principal, 'flag:read') ? 'flag:read' : 'flag:write'
      const shownIn = typeof entry?.environment === 'string' ? [entry.environment] : [...environments.keys()].sort()
      for (const from of shownIn) requireIn(caller.principal, needs, from)
      requireIn(caller.principal, needs, target)
      // the definition as it was: every constraint it had, and null for those it did not (removed)
      const patch: Record<string, unknown> = {
        type: was.type,
        description: was.description,
        defaultValue: was.defaultValue,
        valueExists: was.valueExists,
      }
      if (was.valueExists === true) patch.value = was.value
      for (const field of TYPE_CONSTRAINTS[was.type as FlagType] ?? []) patch[field] = was[field] ?? null
      // targeting as it was too (docs/targeting.md#rules): entries from before targeting existed read as enabled, no rules
      patch.enabled = was.enabled ?? true
      for (const field of ['variants', 'targeting', 'metadata'] as const) patch[field] = was[field] ?? null
      // a change of one environment's state is rolled back there (the shared fields with it)
      return flags.update(caller, name, patch, ifMatch, 'rollback', target)
    },
  }
}
