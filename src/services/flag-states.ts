/**
 * What a write does to the other environments' states of a flag (docs/environments.md). A write
 * is made as one environment sees the flag (the home one by default): its result holds the shared
 * fields and that environment's state; the states of the others are carried over: a new flag starts with the same state everywhere; a changed flag keeps every other
 * environment's state, checked against the new shared fields (a state that breaks them is refused,
 * naming the environment), except after a change of type, which resets them to the type's
 * defaults (no value, enabled, no rule), since their values were of the old type.
 */

import { type FlagState, stampServed, stateOf, withState } from '../domain/environment.ts'
import { ValidationFailedError } from '../domain/errors.ts'
import { definitionOf, type Flag } from '../domain/flag.ts'
import { validateDefinition } from '../domain/flag-definition.ts'
import { setOwn } from '../domain/own-property.ts'
import type { Snapshot } from '../storage/store.ts'
import { flagView, homeOf } from './environment-views.ts'

/**
 * The row to store after a write: `next` is the flag as environment `written` sees it after the
 * write (the home one when absent); every other environment's state is carried from `previous`
 * (see module comment).
 */
export function carryStates(read: Snapshot, next: Flag, previous: Flag | undefined, written?: string): Flag {
  // and which environments' views the write moved (docs/environments.md#revisions)
  return stampServed(previous, carried(read, next, previous, written), homeOf(read))
}

function carried(read: Snapshot, next: Flag, previous: Flag | undefined, written?: string): Flag {
  const home = homeOf(read)
  if (previous === undefined && written !== undefined && home !== undefined) return bornIn(read, next, written, home)
  if (written !== undefined && written !== home && home !== undefined) {
    // the written environment's state goes to `states`; the home one's stays the row's own
    const homeView = carried(read, withState(next, stateOf(flagView(previous as Flag, home, home))), previous)
    const checked = validateDefinition(definitionOf(homeView) as unknown as Record<string, unknown>, {
      prefix: `environments.${home}.`,
      segments: read.segmentRules(),
    })
    if (!checked.ok) throw new ValidationFailedError(checked.problems)
    const kept = { ...(homeView.states ?? {}), [written]: stateOf(next) }
    return { ...homeView, states: kept }
  }
  const others = [...read.environments.keys()].filter((env) => env !== home && env !== written)
  if (others.length === 0) return withoutStates(next)
  const states: Record<string, FlagState> = {}
  const problems: { field: string; reason: string }[] = []
  for (const env of others) {
    const before = previous === undefined ? undefined : flagView(previous, env, home)
    if (before === undefined) {
      setOwn(states, env, stateOf(next))
      continue
    }
    if (before.type !== next.type) {
      setOwn(states, env, { valueExists: false, enabled: true })
      continue
    }
    // the environment's own state in place of the written one's: a value it lacks must not remain
    const view = definitionOf(withState(next, stateOf(before)))
    const checked = validateDefinition(view as unknown as Record<string, unknown>, {
      prefix: `environments.${env}.`,
      segments: read.segmentRules(),
    })
    if (!checked.ok) problems.push(...checked.problems)
    else setOwn(states, env, stateOf(before))
  }
  if (problems.length > 0) throw new ValidationFailedError(problems)
  return { ...withoutStates(next), states }
}

/**
 * A new flag made in environment `env` (the default one too, when named): `env` gets its state,
 * every other environment the type's defaults (no value, enabled), as a create naming an
 * environment does (docs/environments.md#flags-in-an-environment).
 */
function bornIn(read: Snapshot, made: Flag, env: string, home: string): Flag {
  const blank = withState(made, { valueExists: false, enabled: true })
  const states: Record<string, FlagState> = {}
  for (const other of read.environments.keys()) if (other !== home && other !== env) setOwn(states, other, stateOf(blank))
  if (env !== home) setOwn(states, env, stateOf(made))
  const row = env === home ? withoutStates(made) : blank
  return Object.keys(states).length === 0 ? row : { ...row, states }
}

function withoutStates(flag: Flag): Flag {
  if (flag.states === undefined) return flag
  const { states: _states, ...rest } = flag
  return rest as Flag
}
