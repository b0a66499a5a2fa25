/**
 * Flags as one environment sees them (docs/environments.md#how-flags-are-stored): a flag row holds
 * the shared definition and every environment's state alike; a view (`flagIn`) is the definition
 * plus one environment's state, the `Flag` every engine, cache and route works on. Views are made
 * once per row and environment (rows never change) and the map of one environment's views once per
 * committed snapshot.
 */

import type { Flag } from '../domain/flag.ts'
import { type FlagRow, flagIn } from '../domain/flag-row.ts'
import type { Snapshot } from '../storage/store.ts'

// a row's one view, or its views by environment once a second environment asks for it: most rows
// are seen by one environment, and a map per row cost about 200 bytes a flag
// (docs/performance.md#memory-that-goes-back)
const views = new WeakMap<FlagRow, Flag | Map<string, Flag>>()
// the environment of each view (usage counts by it)
const viewEnvironments = new WeakMap<Flag, string>()
const maps = new WeakMap<ReadonlyMap<string, FlagRow>, Map<string, ReadonlyMap<string, Flag>>>()

/** The environment a flag view was made for (`undefined` for a flag not made by `flagView`). */
export function environmentOfView(view: Flag): string | undefined {
  return viewEnvironments.get(view)
}

/** The flag `row` as environment `env` sees it, made once per row and environment. */
export function flagView(row: FlagRow, env: string): Flag {
  const known = views.get(row)
  if (known instanceof Map) {
    const kept = known.get(env)
    if (kept !== undefined) return kept
  } else if (known !== undefined && viewEnvironments.get(known) === env) return known
  const view = flagIn(row, env)
  viewEnvironments.set(view, env)
  if (known === undefined) views.set(row, view)
  else if (known instanceof Map) known.set(env, view)
  else
    views.set(
      row,
      new Map([
        [viewEnvironments.get(known) as string, known],
        [env, view],
      ]),
    )
  return view
}

/**
 * Every flag by name as environment `env` of a transaction's `read` sees it, made anew: a draft's
 * maps change under it, so nothing is kept for them.
 */
export function flagsInDraft(read: Snapshot, env: string): ReadonlyMap<string, Flag> {
  return new Map([...read.flags].map(([name, row]) => [name, flagIn(row, env)]))
}

/** Every flag by name as environment `env` of committed `snapshot` sees it (kept per snapshot; in a transaction, `flagsInDraft`). */
export function flagsIn(snapshot: Snapshot, env: string): ReadonlyMap<string, Flag> {
  const rows = snapshot.flags
  let byEnv = maps.get(rows)
  const kept = byEnv?.get(env)
  if (kept !== undefined) return kept
  const out: ReadonlyMap<string, Flag> = new Map([...rows].map(([name, row]) => [name, flagView(row, env)]))
  if (byEnv === undefined) maps.set(rows, (byEnv = new Map()))
  byEnv.set(env, out)
  return out
}
