/**
 * Archive and restore (docs/api.md#archive): an archived flag is kept whole — definition, every
 * environment's state, usage, history, its name — but every evaluation path, sync and the flagd
 * export answer it as unknown (the served snapshot leaves it out). Restore brings it back as it was.
 * Both are a write of a shared field: a new revision that every environment sees, which needs the
 * unscoped `flag:write` (the store's write guard checks it, as for every shared field).
 */

import { canSeeFlag, requireFlagInScope, requirePermission } from '../domain/access-policy.ts'
import type { Clock } from '../domain/clock.ts'
import { ChangeRequestRequiredError, ConflictError, NotFoundError } from '../domain/errors.ts'
import { type Flag, isArchived } from '../domain/flag.ts'
import type { FlagRow } from '../domain/flag-row.ts'
import { dependentIndex } from '../domain/prerequisite-graph.ts'
import { namesAsSeen } from '../domain/prerequisite-visibility.ts'
import type { Caller } from '../domain/principal.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import { commitMeta } from './commit-meta.ts'
import { flagView } from './environment-views.ts'

/** The `409` of a change to an archived flag (docs/api.md#archive). */
export const archivedConflict = (name: string) =>
  new ConflictError(`flag ${name} is archived; restore it first (POST /api/flags/${name}/restore)`, { field: 'name', archived: true })

/** The flags that require flag `name` directly and so keep it from being archived or deleted (docs/api.md#archive), in name order. */
export function dependentsOf(read: Snapshot, name: string): string[] {
  return [...(dependentIndex(read.flags).get(name) ?? [])]
}

/**
 * Why flag `row` cannot be archived now (already archived, or required by other flags, named as
 * `canSee` lets the reader see them), or `undefined` when it can (docs/api.md#archive).
 */
export function archiveRefusal(read: Snapshot, row: FlagRow, canSee: (name: string) => boolean = () => true): string | undefined {
  if (isArchived(row)) return `flag ${row.name} is already archived`
  const dependents = dependentsOf(read, row.name)
  if (dependents.length === 0) return undefined
  return `flag ${row.name} is required by ${namesAsSeen(dependents, canSee).text}; change them first`
}

/** Flag `row` archived (`true`) or restored (`false`) at time `at`, as a new revision every environment sees. */
export function withArchived(row: FlagRow, archived: boolean, at: string): FlagRow {
  const { archived: _was, servedRevisions: _served, ...rest } = row
  return { ...rest, ...(archived ? { archived: true as const } : {}), updatedAt: at, revision: row.revision + 1 }
}

/**
 * Archives (`archived: true`) or restores (`false`) flag `name` for `caller`, answering it as
 * environment `env` sees it afterwards. `409` when it already is so, or (archiving) while other
 * flags require it; `404` for an unknown flag or environment.
 */
export async function archiveFlag(
  store: Store,
  now: Clock,
  caller: Caller,
  name: string,
  archived: boolean,
  env: string,
  shownIn: string,
): Promise<Flag> {
  requirePermission(caller.principal, 'flag:write')
  requireFlagInScope(caller.principal, name)
  const out = await store
    .transact({ ...commitMeta(caller), shownIn }, (tx) => {
      if (!tx.read.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
      const current = tx.read.flags.get(name)
      if (current === undefined) throw new NotFoundError(`no flag named ${JSON.stringify(name)}`)
      if (isArchived(current) === archived)
        throw new ConflictError(
          archived ? `flag ${name} is already archived` : `flag ${name} is not archived; only an archived flag can be restored`,
          {
            field: 'name',
            archived: isArchived(current),
          },
        )
      if (archived) {
        const dependents = dependentsOf(tx.read, current.name)
        if (dependents.length > 0) {
          // a confined caller is told only the dependents it can see (docs/api.md#prerequisites)
          const told = namesAsSeen(dependents, (n) => canSeeFlag(caller.principal, n))
          throw new ConflictError(`flag ${name} is required by ${told.text}; change them first`, { field: 'name', dependents: told.seen })
        }
      }
      const next = withArchived(current, archived, now().toISOString())
      tx.put('flags', next)
      return flagView(next, env)
    })
    .catch((err: unknown) => {
      throw err instanceof ChangeRequestRequiredError ? protectedArchive(err.environment, name, archived) : err
    })
  return out.result
}

/**
 * The refusal says what can archive or restore there (docs/api.md#archive): a change request
 * (`{"flag": name, "archive": true}`) archives; someone holding `flag:bypass` there does either, over
 * the API, or the environment is opened for the moment.
 */
function protectedArchive(env: string, name: string, archived: boolean): ChangeRequestRequiredError {
  const [doing, moves, route] = archived ? ['archiving', 'stops', 'archive'] : ['restoring', 'starts', 'restore']
  const how = archived
    ? `request it (POST /api/change-requests {"environment": "${env}", "changes": [{"flag": "${name}", "archive": true}]}), or someone holding flag:bypass@${env} does it`
    : `a change request cannot restore a flag, so someone holding flag:bypass@${env} does it`
  return new ChangeRequestRequiredError(
    env,
    `${doing} flag ${name} ${moves} what ${env} serves, and ${env} is protected: ${how} (POST /api/flags/${name}/${route}), or ${env} is opened for the moment (PUT /api/environments/${env} {"protected": false}, audited)`,
  )
}
