/**
 * Audit entries (docs/api.md#audit-log): what the log records of each committed change, made from the rows
 * before and after it. Pure, so every store (the JSON file's journal, PostgreSQL) records the same
 * entries. Never a password, hash or token secret: users and tokens appear as their public
 * resources. Logins and logouts, and sessions pruned when they expire, are not recorded; a session
 * ended by someone else (or with its user) is.
 */

import { type StoredToken, toPublicToken } from './api-token.ts'
import { type ChangeRequest, changeRequestAction } from './change-request.ts'
import type { Environment } from './environment.ts'
import { toFlagResource } from './flag.ts'
import { type FlagRow, flagIn, stateIn } from './flag-row.ts'
import { type Actor, actorOf, type Principal } from './principal.ts'
import type { GuardEvidence } from './rollout-guard.ts'
import { type Segment, toSegmentResource } from './segment.ts'
import type { StoredSession } from './session.ts'
import { type StoredUser, toPublicUser } from './user.ts'

/** What an entry is about. */
export interface AuditTarget {
  type: 'flag' | 'user' | 'token' | 'session' | 'segment' | 'environment' | 'change-request'
  id?: string
  name?: string
}

/** One entry as `GET /api/audit` shows it. */
export interface AuditEntry {
  id: number
  at: string
  actor: Actor
  source: string
  requestId: string
  action: string
  target: AuditTarget
  revision?: number
  /** Flag entries: the environment whose state the change moved; `null` when it moved shared fields only. */
  environment?: string | null
  /** Flag entries: a protected environment's state changed by someone holding `flag:bypass`. */
  bypass?: true
  /** Flag entries: the change request that made the change. */
  changeRequest?: string
  /** Flag entries of a scheduled change applied late (the daemon was down at the time): by how much. */
  lateSeconds?: number
  /** Flag entries of a rollout its guard stopped: the evidence of the trip (docs/guarded-rollouts.md#when-a-guard-trips). */
  guard?: GuardEvidence
  before: Record<string, unknown> | null
  after: Record<string, unknown> | null
}

/** An entry as a store keeps it: the entry, and the stable id of the flag it concerns (never shown). */
export interface StoredAuditEntry {
  entry: AuditEntry
  /** The flag's internal id, so history follows it through renames. */
  flagId?: string
}

/** Who made a commit, through what, and in which environment (the shape of the store's `CommitMeta`). */
export interface ChangeContext {
  principal: Principal
  source: string
  requestId: string
  /** The environment a flag write acted in, by name. */
  environment?: string
  /** A write of every environment: the one whose view its flag entries show. */
  shownIn?: string
  /** The rows whose change moved what a protected environment serves, by `flag:bypass`. */
  bypassed?: readonly string[]
  /** The change request a write applies (its flag entries name it). */
  changeRequest?: string
  /** A scheduled change applied this many seconds late. */
  lateSeconds?: number
  /** A guard's trip: its evidence. */
  guard?: GuardEvidence
}

/** One changed row, as the store describes it (the shape of the store's `Change`). */
export interface RowChange {
  seq: number
  table: 'flags' | 'users' | 'sessions' | 'tokens' | 'segments' | 'environments' | 'changeRequests'
  id: string
  before: unknown
  after: unknown
}

/** The entity named in an action (`flag.updated`) per table: what webhook patterns may name. */
export const AUDIT_ENTITY: Record<RowChange['table'], string> = {
  flags: 'flag',
  users: 'user',
  tokens: 'token',
  sessions: 'session',
  segments: 'segment',
  changeRequests: 'change-request',
  environments: 'environment',
}
const verb = (before: unknown, after: unknown) => (before === null ? 'created' : after === null ? 'deleted' : 'updated')

/** A flag change's action: archived and restored are their own (docs/api.md#archive). */
function flagAction(before: FlagRow | null, after: FlagRow | null): string {
  if (before !== null && after !== null && (before.archived === true) !== (after.archived === true))
    return after.archived === true ? 'flag.archived' : 'flag.restored'
  return `flag.${verb(before, after)}`
}

function userResource(u: StoredUser | null, passwordChanged: boolean): Record<string, unknown> | null {
  if (!u) return null
  return { ...toPublicUser(u), ...(passwordChanged ? { passwordChanged: true } : {}) }
}

/**
 * The entries of one commit. `principal` acted through `source` (`maintenance` is never recorded),
 * `at` is when the commit became durable.
 */
export function auditEntriesOf(context: ChangeContext, at: string, changes: readonly RowChange[]): StoredAuditEntry[] {
  const { principal, source, requestId, environment } = context
  if (source === 'maintenance') return []
  const actor = actorOf(principal)
  const base = (id: number) => ({ id, at, actor, source, requestId })
  const out: StoredAuditEntry[] = []
  for (const c of changes) {
    const action =
      c.table === 'flags'
        ? flagAction(c.before as FlagRow | null, c.after as FlagRow | null)
        : `${AUDIT_ENTITY[c.table]}.${verb(c.before, c.after)}`
    // a flag row rewritten at its revision only gained or lost another environment's copy of its
    // state: the environment's own entry records that
    if (c.table === 'flags' && c.before !== null && c.after !== null && (c.before as FlagRow).revision === (c.after as FlagRow).revision)
      continue
    if (c.table === 'changeRequests') {
      const before = c.before as ChangeRequest | null
      const after = c.after as ChangeRequest | null
      const request = (after ?? before) as ChangeRequest
      out.push({
        entry: {
          ...base(c.seq),
          action: changeRequestAction(before, after),
          target: { type: 'change-request', id: request.id, name: request.title },
          environment: request.environment,
          before: before as unknown as Record<string, unknown> | null,
          after: after as unknown as Record<string, unknown> | null,
        },
      })
      continue
    }
    if (c.table === 'environments') {
      const env = (c.after ?? c.before) as Environment
      const shown = (e: Environment | null) =>
        e && {
          name: e.name,
          description: e.description,
          protected: e.protected,
          requiredApprovals: e.requiredApprovals,
          // its own colour only: absent, the default for its name (docs/api.md#environment-colours)
          ...(e.color === undefined ? {} : { color: e.color }),
        }
      // only the mark of the default moved (a new default in the config, made at start): nothing a reader sees
      if (
        c.before !== null &&
        c.after !== null &&
        JSON.stringify(shown(c.before as Environment)) === JSON.stringify(shown(c.after as Environment))
      )
        continue
      out.push({
        entry: {
          ...base(c.seq),
          action,
          target: { type: 'environment', name: env.name },
          before: shown(c.before as Environment | null),
          after: shown(c.after as Environment | null),
        },
      })
    } else if (c.table === 'segments' || c.table === 'flags') {
      // named and revised rows: the resource before and after, at the row's revision
      const isFlag = c.table === 'flags'
      // a flag as the environment written sees it (docs/environments.md#audit): the audit log keeps
      // views, never rows, so an entry reads the same whatever the rows' shape
      const seen = (f: FlagRow) => flagIn(f, environment ?? context.shownIn ?? Object.keys(f.states)[0] ?? '')
      const environmentMoved = (before: FlagRow | null, after: FlagRow | null): string | null => {
        if (environment === undefined) return null
        // a created or deleted flag moved it: nothing to compare (an import creates thousands)
        if (before === null || after === null) return environment
        const was = stateIn(before, environment)
        const is = stateIn(after, environment)
        return was === is || JSON.stringify(was) === JSON.stringify(is) ? null : environment
      }
      // the environment whose state moved, and whether a protection was bypassed to move it
      const flagContext = (before: FlagRow | null, after: FlagRow | null) => {
        const moved = environmentMoved(before, after)
        return {
          environment: moved,
          ...(context.bypassed?.includes(((after ?? before) as FlagRow).id) ? { bypass: true as const } : {}),
          ...(context.changeRequest !== undefined ? { changeRequest: context.changeRequest } : {}),
          ...(context.lateSeconds !== undefined ? { lateSeconds: context.lateSeconds } : {}),
          ...(context.guard !== undefined ? { guard: context.guard } : {}),
        }
      }
      const resource = (row: unknown) => (isFlag ? toFlagResource(seen(row as FlagRow), Date.parse(at)) : toSegmentResource(row as Segment))
      const row = (c.after ?? c.before) as FlagRow | Segment
      out.push({
        entry: {
          ...base(c.seq),
          action,
          target: { type: isFlag ? 'flag' : 'segment', name: row.name },
          revision: row.revision,
          // the environment whose state moved; null when only shared fields did (docs/environments.md#audit)
          ...(isFlag ? flagContext(c.before as FlagRow | null, c.after as FlagRow | null) : {}),
          before: c.before === null ? null : resource(c.before),
          after: c.after === null ? null : resource(c.after),
        },
        ...(isFlag ? { flagId: row.id } : {}),
      })
    } else if (c.table === 'users') {
      const before = c.before as StoredUser | null
      const after = c.after as StoredUser | null
      const changed = before !== null && after !== null && before.passwordHash !== after.passwordHash
      const user = (after ?? before) as StoredUser
      out.push({
        entry: {
          ...base(c.seq),
          action,
          target: { type: 'user', id: user.id, name: user.username },
          before: userResource(before, false),
          after: userResource(after, changed),
        },
      })
    } else if (c.table === 'tokens') {
      const before = c.before as StoredToken | null
      const after = c.after as StoredToken | null
      const token = (after ?? before) as StoredToken
      out.push({
        entry: {
          ...base(c.seq),
          action,
          target: { type: 'token', id: token.id, name: token.name },
          before: before && { ...toPublicToken(before) },
          after: after && { ...toPublicToken(after) },
        },
      })
    } else {
      const session = c.before as StoredSession | null
      // only a session ended by someone else is recorded: not logins, not one's own logout
      if (c.after !== null || !session || (principal.kind === 'user' && principal.userId === session.userId)) continue
      out.push({
        entry: {
          ...base(c.seq),
          action,
          target: { type: 'session', id: session.id },
          before: { id: session.id, userId: session.userId, createdAt: session.createdAt, expiresAt: session.expiresAt },
          after: null,
        },
      })
    }
  }
  return out
}
