/**
 * Flag evaluation for applications (contract §13), over the committed snapshot only, so an
 * evaluation never writes and never sees a change that is not durable.
 *
 * The bulk ETag is computed without evaluating anything: the flags' revision (the store's change
 * sequence, the same on every replica), the caller's scope and the only part of a context that can
 * change an answer, its targeting key. So a `304` costs a hash, and it can never hide a change: any
 * change to any flag moves the revision, and two contexts that evaluate differently differ in their
 * targeting key.
 */

import { canSeeFlag, flagScopeOf, requirePermission, visiblePrefixes } from '../domain/access-policy.ts'
import { NotFoundError } from '../domain/errors.ts'
import { type EvaluationContext, evaluate, targetingKeyOf } from '../domain/evaluation.ts'
import type { Flag } from '../domain/flag.ts'
import type { Principal } from '../domain/principal.ts'
import { TextCache } from '../domain/text-cache.ts'
import type { Store } from '../storage/store.ts'
import type { FlagReadModel } from './flag-read-model.ts'

/** Bulk answers kept across requests: at most 32 Mi characters (about 64 MB) in all. */
export const BULK_CACHE_CHARS = 32 * 1024 * 1024

/** The evaluation use cases. */
export interface EvaluationService {
  /** One flag as JSON text; `NotFoundError` when it does not exist for the caller. */
  oneJson(principal: Principal, key: string, context: EvaluationContext): string
  /** The bulk ETag for the caller and context (quoted), without evaluating. */
  bulkTag(principal: Principal, context: EvaluationContext): string
  /** Every visible flag evaluated, as the JSON text of the `flags` array, and the ETag it matches. */
  bulkJson(principal: Principal, context: EvaluationContext): { etag: string; flags: string }
  /** The flags' revision: what every stream and ETag of evaluations moves with. */
  revision(): number
  /** What the cache of bulk answers holds now (bounded by `BULK_CACHE_CHARS`). */
  bulkCacheSize(): { entries: number; chars: number }
}

/** Creates the service over the store and the flags' read model. */
export function createEvaluationService(store: Store, read: FlagReadModel): EvaluationService {
  // context-free answers (every flag but an unpinned A/B test) serialised once per stored row
  const fixed = new WeakMap<Flag, string>()
  // whole bulk answers by ETag: pollers with the same context share one rendering per revision;
  // bounded by size (32 Mi characters, about 64 MB), since one answer of many flags may be megabytes
  const bulk = new TextCache<string>(BULK_CACHE_CHARS)

  const oneJson = (flag: Flag, context: EvaluationContext): string => {
    if (flag.type === 'AB-TEST' && !flag.valueExists) return JSON.stringify(evaluate(flag, context))
    let text = fixed.get(flag)
    if (text === undefined) fixed.set(flag, (text = JSON.stringify(evaluate(flag, {}))))
    return text
  }
  const tagOf = (principal: Principal, context: EvaluationContext, revision: number): string => {
    const scope = flagScopeOf(principal)
    const key = targetingKeyOf(context)
    if (scope.length === 0 && key === undefined) return `"${revision}"`
    const digest = Bun.hash.wyhash(`${scope.join('\n')}\u0000${key ?? ''}`, 0n).toString(36)
    return `"${revision}-${digest}"`
  }

  return {
    oneJson(principal, key, context) {
      requirePermission(principal, 'flag:evaluate')
      const flag = canSeeFlag(principal, key) ? store.committed().flags.get(key) : undefined
      if (!flag) throw new NotFoundError(`no flag named ${JSON.stringify(key)}`)
      return oneJson(flag, context)
    },

    bulkTag(principal, context) {
      requirePermission(principal, 'flag:evaluate')
      return tagOf(principal, context, store.committed().revisionOf('flags'))
    },

    bulkJson(principal, context) {
      requirePermission(principal, 'flag:evaluate')
      const etag = tagOf(principal, context, store.committed().revisionOf('flags'))
      let flags = bulk.get(etag)
      if (flags === undefined) {
        const evaluations: string[] = []
        for (const flag of read.list(visiblePrefixes(flagScopeOf(principal), '')))
          if (canSeeFlag(principal, flag.name)) evaluations.push(oneJson(flag, context))
        flags = `[${evaluations.join(',')}]`
        bulk.set(etag, flags)
      }
      return { etag, flags }
    },

    revision: () => store.committed().revisionOf('flags'),
    bulkCacheSize: () => bulk.size,
  }
}
