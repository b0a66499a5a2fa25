/**
 * Environments (docs/environments.md): one daemon holds development, staging, production…; a flag
 * is one definition shared by all of them plus a state per environment. This module holds the
 * environment row, its name rule, and the split of a flag into its shared definition and the
 * fields each environment has of its own.
 */

import type { Flag, FlagValue, JsonObject } from './flag.ts'
import type { Rollout } from './rollout.ts'
import { VARIANT_NAME } from './variant-name.ts'

/** The default environment's name when the config names none (config `environment`). */
export const DEFAULT_ENVIRONMENT = 'development'

/** At most this many environments (a 21st is refused). */
export const MAX_ENVIRONMENTS = 20

/** A stored environment. Every environment's flag states are stored alike (docs/environments.md#how-flags-are-stored). */
export interface Environment {
  /** The name is the id: environments are not renamed. */
  id: string
  name: string
  description: string
  /** Changes to it go through change requests (docs/environments.md). */
  protected: boolean
  /** Approvals a change request into it needs. */
  requiredApprovals: number
  /** Its own CSS colour; absent, the default for its name (docs/api.md#environment-colours). */
  color?: string
  /**
   * True for the one the daemon last served as its default (config `environment`): commands on a
   * stopped data directory act in it, and a default named anew in the config starts as its copy
   * (docs/environments.md#the-default-environment). A mark of identity only: its flag states are
   * stored as every other environment's.
   */
  default?: true
  createdAt: string
  updatedAt: string
}

/** Words that are routes of their own under `/api/environments/`, so no environment can be named by them there. */
const ROUTE_WORDS = new Set(['compare'])

/**
 * Why `name` cannot name an environment, or `undefined`: the rule of variant names, and none of the
 * API's own path words (docs/environments.md#managing-environments), so every environment the CLI or the config
 * creates can be read, protected and removed through the API too.
 */
export function environmentNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'must be a string'
  if (!VARIANT_NAME.test(name)) return 'must be 1-64 of A-Z a-z 0-9 . _ -'
  if (ROUTE_WORDS.has(name)) return `is a word of the API (/api/environments/${name}); choose another name`
  return undefined
}

/** The fields of a flag that each environment has of its own; every other field is shared. */
export const STATE_FIELDS = ['valueExists', 'value', 'enabled', 'targeting', 'chancePercentB', 'rollout'] as const

/** One of `STATE_FIELDS`. */
export type StateField = (typeof STATE_FIELDS)[number]

/** One environment's state of a flag. */
export interface FlagState {
  valueExists: boolean
  value?: FlagValue
  enabled?: boolean
  targeting?: JsonObject
  chancePercentB?: number
  rollout?: Rollout
}

/** The state a flag view holds (absent fields left out, so states compare by their JSON). */
export function stateOf(flag: Pick<Flag, StateField>): FlagState {
  const state: FlagState = { valueExists: flag.valueExists }
  if (flag.value !== undefined) state.value = flag.value
  if (flag.enabled !== undefined) state.enabled = flag.enabled
  if (flag.targeting !== undefined) state.targeting = flag.targeting
  if (flag.chancePercentB !== undefined) state.chancePercentB = flag.chancePercentB
  if (flag.rollout !== undefined) state.rollout = flag.rollout
  return state
}

/** The shared part of a flag definition (every field but the per-environment ones), to compare writes by. */
export function sharedOf(definition: object): Record<string, unknown> {
  const shared: Record<string, unknown> = { ...definition }
  for (const field of STATE_FIELDS) delete shared[field]
  for (const field of ['states', 'servedRevisions', 'servedRevision', 'revision', 'updatedAt', 'createdAt', 'id'] as const)
    delete shared[field]
  return shared
}

/** View `flag` with `state` in place of its own: the same flag as another environment sees it. */
export function withState(flag: Flag, state: FlagState): Flag {
  const view: Record<string, unknown> = { ...flag }
  for (const field of STATE_FIELDS) delete view[field]
  delete view.servedRevision
  return Object.freeze({ ...view, ...state }) as Flag
}
