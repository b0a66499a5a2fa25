/**
 * Flags as one environment sees them (docs/environments.md): a flag row holds the shared
 * definition and the home environment's state in its own fields, and every other environment's
 * state in `states`. A view is the definition plus one environment's state, the `Flag` every
 * engine, cache and route works on. Views are made once per row and environment (rows never
 * change) and the map of one environment's views once per committed snapshot.
 */

import { withState } from '../domain/environment.ts'
import type { Flag } from '../domain/flag.ts'
import { ownValue } from '../domain/own-property.ts'
import type { Snapshot } from '../storage/store.ts'

const views = new WeakMap<Flag, Map<string, Flag>>()
// the environment of each view of a non-home environment (usage counts by it)
const viewEnvironments = new WeakMap<Flag, string>()

/** The environment a flag view was made for, when it is not the home one (rows and home views: `undefined`). */
export function environmentOfView(view: Flag): string | undefined {
  return viewEnvironments.get(view)
}
const maps = new WeakMap<ReadonlyMap<string, Flag>, Map<string, ReadonlyMap<string, Flag>>>()

/** The name of the environment whose state flag rows hold in their own fields, if any exists yet. */
export function homeOf(snapshot: Snapshot): string | undefined {
  for (const env of snapshot.environments.values()) if (env.home) return env.name
  return undefined
}

/** The flag `row` as environment `env` sees it (`home`: the row's own environment). */
export function flagView(row: Flag, env: string, home: string | undefined): Flag {
  if (row.states === undefined && (env === home || home === undefined)) return row
  let known = views.get(row)
  const kept = known?.get(env)
  if (kept !== undefined) return kept
  const state = env === home || home === undefined ? undefined : ownValue(row.states, env)
  const { states: _states, ...own } = row
  const made = state === undefined ? (own as Flag) : withState(row, state)
  // the revision this environment last saw the flag change at, when a later change was another's
  const served = ownValue(row.servedRevisions, env)
  const view = Object.freeze(served === undefined ? made : { ...made, servedRevision: served }) as Flag
  if (state !== undefined) viewEnvironments.set(view, env)
  if (known === undefined) views.set(row, (known = new Map()))
  known.set(env, view)
  return view
}

/** Every flag by name as environment `env` of `snapshot` sees it. */
export function flagsIn(snapshot: Snapshot, env: string): ReadonlyMap<string, Flag> {
  const rows = snapshot.flags
  const home = homeOf(snapshot)
  let byEnv = maps.get(rows)
  const kept = byEnv?.get(env)
  if (kept !== undefined) return kept
  let plain = true
  for (const row of rows.values())
    if (row.states !== undefined) {
      plain = false
      break
    }
  const out: ReadonlyMap<string, Flag> =
    plain && (env === home || home === undefined) ? rows : new Map([...rows].map(([name, row]) => [name, flagView(row, env, home)]))
  if (byEnv === undefined) maps.set(rows, (byEnv = new Map()))
  byEnv.set(env, out)
  return out
}
