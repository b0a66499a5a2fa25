/**
 * The read side of flags over the committed snapshot: names kept sorted (re-sorted only when the
 * flags' revision moves, so logins and session changes cost nothing here) and each flag serialised
 * once per stored row (rows are frozen, so the text is part of the row, and goes with it). A list
 * or prefix query joins those strings instead of re-serialising; a prefix is found by binary
 * search, since names are ASCII and sort by code point. Rendered lists are kept by the caching
 * decorator, `cachedFlagReadModel`, in the request cache (docs/architecture.md#caching). With
 * `keep: false` nothing is kept: the plain twin the property test of cached reads compares with.
 */

import type { Clock } from '../domain/clock.ts'
import { type Flag, isArchived, toFlagResource } from '../domain/flag.ts'
import { DEFAULT_LIFETIMES, isPotentiallyStale, type KindLifetimes, kindOf } from '../domain/flag-lifecycle.ts'
import { namesUnder } from '../domain/names-under.ts'
import { type RequestCache, scopeKey, textBytes } from '../domain/request-cache.ts'
import type { Rollout } from '../domain/rollout.ts'
import { rolloutStatus } from '../domain/rollout-status.ts'
import type { Store } from '../storage/store.ts'
import { flagsIn } from './environment-views.ts'

/** A flag's API resource as JSON text, and the ETag of that revision (`"4"`). */
export interface FlagText {
  readonly json: string
  readonly etag: string
}

/** Cached views of the committed flags. */
export interface FlagReadModel {
  /** The flag's API resource as JSON text. */
  json(flag: Flag): string
  /** `json(flag)` with its ETag, made once per stored row: a read answers without building a string. */
  text(flag: Flag): FlagText
  /**
   * A JSON array of the flags whose names start with one of `prefixes`, in name order, archived ones
   * left out (docs/api.md#archive). The
   * prefixes must not overlap and must be sorted (as `visiblePrefixes` returns them).
   */
  listJson(prefixes: readonly string[], env?: string): string
  /** The flags under `prefixes` (same rules as `listJson`, archived ones included), in name order; `env`: as that environment sees them (default: the default one). */
  list(prefixes: readonly string[], env?: string): Flag[]
  /** The flags' revision the views are of. */
  revision(): number
  /**
   * How many flags of that revision have become potentially stale by now: with the revision, what
   * lists and their ETags are current for, since the mark moves with time alone (docs/api.md#lifecycle).
   */
  staleEpoch(): number
  /** The environment a read naming none sees (config `environment`). */
  readonly defaultEnvironment: string
  /**
   * Where the rollouts `env` sees stand now, as one short string ('' without any): reads show their
   * status and percent, so a kept list or an ETag must move with it (docs/guarded-rollouts.md#status-and-percent).
   */
  rolloutPhase(env?: string): string
}

/**
 * Options: `keep: false` serialises each flag anew on every read (the plain twin tests compare
 * with); `lifetimes` decide `potentiallyStale` with the clock (docs/api.md#lifecycle; default: the
 * default lifetimes).
 */
export interface FlagReadModelOptions {
  keep?: boolean
  lifetimes?: KindLifetimes
}

/**
 * Creates the read model over a store; `defaultEnvironment`: the one a read naming none sees; `now`:
 * the clock a rollout's status and percent, and whether a flag is potentially stale, are read at.
 */
export function createFlagReadModel(
  store: Store,
  defaultEnvironment: string,
  now: Clock,
  options: FlagReadModelOptions = {},
): FlagReadModel {
  // a flag's text while it is not, and once it is, potentially stale: the mark moves with time alone
  const texts = [new WeakMap<Flag, FlagText>(), new WeakMap<Flag, FlagText>()] as const
  // a flag with a rollout: its text as of the status and percent (and staleness) it was made at
  const phased = new WeakMap<Flag, { phase: string; text: FlagText }>()
  const phaseOf = (flag: Flag, nowMs: number) => {
    const { status, percent } = rolloutStatus(flag.rollout as Rollout, nowMs)
    return `${status}:${percent}`
  }
  // per environment, the views with a rollout at the flags' revision they were found at
  const withRollouts = new Map<string, { at: number; flags: Flag[] }>()
  const keep = options.keep !== false
  const lifetimes = options.lifetimes ?? DEFAULT_LIFETIMES
  // the instants at which a flag of the committed revision becomes potentially stale, sorted
  let flips: number[] = []
  let flipsAt = -1
  let sorted: string[] = []
  let sortedAt = -1

  const names = () => {
    const snapshot = store.committed()
    const at = snapshot.revisionOf('flags')
    if (sortedAt !== at) {
      sorted = [...snapshot.flags.keys()].sort()
      sortedAt = at
    }
    return sorted
  }
  const text = (flag: Flag): FlagText => {
    const nowMs = now().getTime()
    const stale = isPotentiallyStale(flag, lifetimes, nowMs)
    if (flag.rollout !== undefined) {
      const phase = `${phaseOf(flag, nowMs)}${stale ? ':stale' : ''}`
      const kept = phased.get(flag)
      if (kept?.phase === phase) return kept.text
      const made = { json: JSON.stringify(toFlagResource(flag, nowMs, stale)), etag: `"${flag.revision}"` }
      if (keep) phased.set(flag, { phase, text: made })
      return made
    }
    const kept = texts[stale ? 1 : 0]
    let made = kept.get(flag)
    if (made === undefined) {
      made = { json: JSON.stringify(toFlagResource(flag, nowMs, stale)), etag: `"${flag.revision}"` }
      if (keep) kept.set(flag, made)
    }
    return made
  }
  const rolloutPhase = (env?: string) => {
    const seen = env ?? defaultEnvironment
    const snapshot = store.committed()
    const at = snapshot.revisionOf('flags')
    let found = withRollouts.get(seen)
    if (found?.at !== at) {
      const views = flagsIn(snapshot, seen)
      found = { at, flags: [...views.values()].filter((f) => f.rollout !== undefined) }
      if (snapshot.environments.has(seen)) withRollouts.set(seen, found)
    }
    if (found.flags.length === 0) return ''
    const nowMs = now().getTime()
    return Bun.hash.wyhash(found.flags.map((f) => phaseOf(f, nowMs)).join(','), 0n).toString(36)
  }
  const staleEpoch = () => {
    const snapshot = store.committed()
    const at = snapshot.revisionOf('flags')
    if (flipsAt !== at) {
      flips = [...snapshot.flags.values()].flatMap((f) => {
        const days = lifetimes[kindOf(f)]
        return days === null ? [] : [Date.parse(f.createdAt) + days * 86_400_000]
      })
      flips.sort((a, b) => a - b)
      flipsAt = at
    }
    const t = now().getTime()
    let lo = 0
    let hi = flips.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((flips[mid] as number) < t) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  const json = (flag: Flag) => text(flag).json
  const matching = (prefix: string): string[] => {
    const all = names()
    return prefix === '' ? (all as string[]) : namesUnder(all, prefix)
  }
  // views run synchronously, so names() and rows() always see the same committed snapshot
  const rows = (list: string[], env: string | undefined) => {
    const snapshot = store.committed()
    const flags = flagsIn(snapshot, env ?? defaultEnvironment)
    return list.map((n) => flags.get(n) as Flag)
  }
  const under = (prefixes: readonly string[]) => (prefixes.length === 1 ? matching(prefixes[0] as string) : prefixes.flatMap(matching))
  return {
    json,
    text,
    list: (prefixes, env) => rows(under(prefixes), env),
    listJson: (prefixes, env) =>
      `[${rows(under(prefixes), env)
        .filter((f) => !isArchived(f))
        .map(json)
        .join(',')}]`,
    revision: () => store.committed().revisionOf('flags'),
    staleEpoch,
    defaultEnvironment,
    rolloutPhase,
  }
}

/**
 * `model` with its rendered lists kept in `cache`, by their environment and prefixes, for the
 * flags' revision (pollers ask the same ones). The key tells no prefixes (`[]`: nothing visible)
 * from the empty prefix (every flag), so a confined caller never gets a list made for another.
 */
export function cachedFlagReadModel(model: FlagReadModel, cache: RequestCache): FlagReadModel {
  const lists = cache.region<string>('flag-lists', textBytes)
  return {
    ...model,
    listJson: (prefixes, env) =>
      lists.through(`${scopeKey(env, prefixes)}${model.rolloutPhase(env)}@${model.staleEpoch()}`, model.revision(), () =>
        model.listJson(prefixes, env),
      ),
  }
}
