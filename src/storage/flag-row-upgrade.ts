/**
 * The upgrade of stored flag rows to every environment's state stored alike
 * (docs/environments.md#how-flags-are-stored), shared by the state file (schema 5 → 6) and
 * PostgreSQL. Before it, a flag row held one environment's state (the environment marked `home`)
 * in its own fields and every other one's in `states`; after it, `states` holds them all. A row
 * from before environments (no environment rows, so no home) gives its state to the default
 * environment (config `environment`), which the daemon makes at start.
 */

import { STATE_FIELDS } from '../domain/environment.ts'
import { isJsonObject } from '../domain/json-object.ts'
import { setOwn } from '../domain/own-property.ts'

/** The environment whose state old rows hold in their own fields: the one marked `home`, else `fallback`. */
export function homeOfOldRows(environments: Iterable<unknown>, fallback: string): string {
  for (const env of environments) if (isJsonObject(env) && env.home === true && typeof env.name === 'string') return env.name
  return fallback
}

/**
 * An old environment row without its `home` mark; the home one was always the default, so it keeps
 * that mark as `default` (the default the daemon last served).
 */
export function upgradeEnvironmentRow(row: Record<string, unknown>): Record<string, unknown> {
  const { home, ...rest } = row
  return home === true ? { ...rest, default: true } : rest
}

/**
 * An old flag row in the new shape: its own per-environment fields become `states[home]`, beside
 * the states it held of other environments. A row already in the new shape (no `valueExists` of its
 * own) is returned as it is, so the upgrade can run twice.
 */
export function upgradeFlagRow(row: Record<string, unknown>, home: string): Record<string, unknown> {
  if (!Object.hasOwn(row, 'valueExists')) return row
  // in the order every state is written in (states compare by their JSON)
  const own: Record<string, unknown> = {}
  for (const field of STATE_FIELDS) if (row[field] !== undefined) own[field] = row[field]
  const rest: Record<string, unknown> = {}
  const stateFields: readonly string[] = STATE_FIELDS
  for (const [key, value] of Object.entries(row)) if (!stateFields.includes(key)) setOwn(rest, key, value)
  const states: Record<string, unknown> = {}
  if (isJsonObject(row.states)) for (const [env, state] of Object.entries(row.states)) setOwn(states, env, state)
  setOwn(states, home, own)
  return { ...rest, states }
}
