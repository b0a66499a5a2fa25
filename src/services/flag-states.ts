/**
 * What a write does to the other environments' states of a flag (docs/environments.md). A write
 * is made as one environment sees the flag: its result holds the shared fields and that
 * environment's state; the states of the others are carried over. A new flag starts with the same
 * state everywhere (or, made in a named environment, with the type's defaults elsewhere); a changed
 * flag keeps every other environment's state, checked against the new shared fields (a state that
 * breaks them is refused, naming the environment), except after a change of type, which resets
 * them to the type's defaults (no value, enabled, no rule), since their values were of the old type.
 */

import { type FlagState, sharedOf, stateOf, withState } from '../domain/environment.ts'
import { type FieldProblem, ValidationFailedError } from '../domain/errors.ts'
import { definitionOf, type Flag } from '../domain/flag.ts'
import { validateDefinition } from '../domain/flag-definition.ts'
import { BLANK_STATE, type FlagRow, flagIn, rowEverywhere, rowOf, stampServed } from '../domain/flag-row.ts'
import { ownValue, setOwn } from '../domain/own-property.ts'
import { sameJson } from '../domain/same-json.ts'
import type { Snapshot } from '../storage/store.ts'

/** Every environment a row written in `written` holds a state for: those of `read`, and `written`. */
function environmentsOf(read: Snapshot, written: string): string[] {
  const names = [...read.environments.keys()]
  return names.includes(written) ? names : [...names, written]
}

/**
 * The row to store after a write: `next` is the flag as environment `written` sees it after the
 * write; every other environment's state is carried from `previous`, and `servedRevisions` says
 * which environments' views moved (see module comment, docs/environments.md#revisions).
 */
export function carryStates(read: Snapshot, next: Flag, previous: FlagRow | undefined, written: string): FlagRow {
  if (previous === undefined) return rowEverywhere(next, environmentsOf(read, written))
  const states: Record<string, FlagState> = {}
  const problems: FieldProblem[] = []
  // the shared fields unchanged (a value, a rule, a switch in one environment): every other state
  // was checked against them when it was written, so it is carried as it is, unchecked again
  const sharedKept = sameJson(sharedOf(previous), sharedOf(next))
  for (const env of environmentsOf(read, written)) {
    if (env === written) {
      setOwn(states, env, stateOf(next))
      continue
    }
    if (sharedKept) {
      setOwn(states, env, ownValue(previous.states, env) ?? BLANK_STATE)
      continue
    }
    const before = flagIn(previous, env)
    if (before.type !== next.type) {
      setOwn(states, env, BLANK_STATE)
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
  return stampServed(previous, rowOf(next, states))
}

/**
 * A new flag made in environment `env` (the default one too, when named), as a create naming an
 * environment makes it: `env` gets its state, every other environment the type's defaults (no
 * value, enabled; docs/environments.md#flags-in-an-environment).
 */
export function bornIn(read: Snapshot, made: Flag, env: string): FlagRow {
  const states: Record<string, FlagState> = {}
  for (const other of environmentsOf(read, env)) setOwn(states, other, other === env ? stateOf(made) : BLANK_STATE)
  return rowOf(made, states)
}
