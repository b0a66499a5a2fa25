/**
 * What a partial `PUT /api/flags/{name}` means (docs/api.md#flags): which definition results from the
 * current flag and the request body, before validation as a whole. Kept pure so it can be tested
 * as a table.
 */

import { CONSTRAINT_FIELDS, definitionOf, type FlagDefinition, LIFECYCLE_FIELDS, TARGETING_FIELDS } from './flag.ts'

/** Fields a client may send back from a GET that the update ignores. */
export const READ_ONLY_FIELDS = ['createdAt', 'updatedAt', 'revision', 'archived', 'potentiallyStale', 'dependents'] as const

const HANDLED = new Set([
  'name',
  'type',
  'description',
  'defaultValue',
  'value',
  'valueExists',
  ...CONSTRAINT_FIELDS,
  ...TARGETING_FIELDS,
  ...LIFECYCLE_FIELDS,
  ...READ_ONLY_FIELDS,
])

/**
 * Builds the candidate definition (as raw input for `validateDefinition`). A type change starts
 * from the description, `enabled` and `metadata` only (variants and rules are values of the old
 * type); otherwise the current definition is patched: `null` removes a constraint, `variants`,
 * `targeting` or `metadata` (and `enabled`, which then reads true), `defaultValue: null` means no
 * default, `value` sets the value, `valueExists: false` (or `value: null`) clears it.
 */
export function mergeUpdate(current: FlagDefinition, patch: Record<string, unknown>): Record<string, unknown> {
  const typeChange = Object.hasOwn(patch, 'type') && patch.type !== current.type
  const carried = definitionOf(current)
  const base: Record<string, unknown> = typeChange
    ? {
        type: patch.type,
        description: current.description,
        enabled: carried.enabled,
        ...(carried.metadata ? { metadata: carried.metadata } : {}),
        // kind, owner and tags say what the flag is for, whatever its type (docs/api.md#lifecycle)
        ...Object.fromEntries(LIFECYCLE_FIELDS.filter((k) => carried[k] !== undefined).map((k) => [k, carried[k]])),
      }
    : (carried as unknown as Record<string, unknown>)
  if (Object.hasOwn(patch, 'description')) base.description = patch.description
  if (Object.hasOwn(patch, 'defaultValue')) base.defaultValue = patch.defaultValue
  for (const key of [...CONSTRAINT_FIELDS, ...TARGETING_FIELDS, ...LIFECYCLE_FIELDS]) {
    if (!Object.hasOwn(patch, key)) continue
    if (patch[key] === null) delete base[key]
    else base[key] = patch[key]
  }
  const valueGiven = Object.hasOwn(patch, 'value') && patch.value !== null
  if (valueGiven) {
    base.value = patch.value
    base.valueExists = Object.hasOwn(patch, 'valueExists') ? patch.valueExists : true
  } else if (patch.valueExists === false || (Object.hasOwn(patch, 'value') && patch.value === null)) {
    delete base.value
    // a valueExists that is not true or false is kept, so validation names it (value: null does not excuse it)
    const given = patch.valueExists
    base.valueExists = given === undefined || given === null || typeof given === 'boolean' ? false : given
  } else if (Object.hasOwn(patch, 'valueExists')) {
    base.valueExists = patch.valueExists
  }
  for (const key of Object.keys(patch)) if (!HANDLED.has(key)) base[key] = patch[key]
  return base
}
