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
      const { archived: _was, servedRevisions: _served, ...rest } = current
      const next: FlagRow = {
        ...rest,
        ...(archived ? { archived: true as const } : {}),
        updatedAt: now().toISOString(),
        revision: current.revision + 1,
      }
      tx.put('flags', next)
      return flagView(next, env)
    })
    .catch((err: unknown) => {
      throw err instanceof ChangeRequestRequiredError ? protectedArchive(err.environment, name, archived) : err
    })
  return out.result
}

/**
 * A change request cannot archive or restore, so the refusal says what can (docs/api.md#archive):
 * someone holding `flag:bypass` there, over the API, or opening the environment for the moment.
 */
function protectedArchive(env: string, name: string, archived: boolean): ChangeRequestRequiredError {
  const [doing, moves, route] = archived ? ['archiving', 'stops', 'archive'] : ['restoring', 'starts', 'restore']
  return new ChangeRequestRequiredError(
    env,
    `${doing} flag ${name} ${moves} what ${env} serves, and ${env} is protected: a change request cannot ${route} a flag, so someone holding flag:bypass@${env} does it (POST /api/flags/${name}/${route}), or ${env} is opened for the moment (PUT /api/environments/${env} {"protected": false}, audited)`,
  )
}
