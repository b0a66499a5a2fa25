/**
 * Flags: the six types, the fields each type has, the resource shape (contract §5.2), and the
 * type's zero value. Validation lives in `flag-definition.ts`.
 */

export const FLAG_TYPES = ['BOOLEAN', 'INTEGER', 'STRING', 'ENUM', 'TAG', 'AB-TEST'] as const

/** One of the six flag types. */
export type FlagType = (typeof FLAG_TYPES)[number]

/** A value of some flag type. */
export type FlagValue = boolean | number | string | string[]

/** Constraint fields, all optional (an absent one does not constrain). */
export interface FlagConstraints {
  minValue?: number
  maxValue?: number
  maxLength?: number
  regexPattern?: string
  enumValues?: string[]
  minCount?: number
  maxCount?: number
  chancePercentB?: number
}

/** What defines a flag: everything but its name and history. */
export interface FlagDefinition extends FlagConstraints {
  type: FlagType
  description: string
  defaultValue: FlagValue
  valueExists: boolean
  value?: FlagValue
}

/** A stored flag. Objects are never changed in place: an update stores a new object. */
export interface Flag extends FlagDefinition {
  /** Stable internal id (`flg_…`): survives renames, so history can follow a flag. Never shown. */
  id: string
  name: string
  createdAt: string
  updatedAt: string
  revision: number
}

/** Constraint fields in output order. */
export const CONSTRAINT_FIELDS = [
  'minValue',
  'maxValue',
  'maxLength',
  'regexPattern',
  'enumValues',
  'minCount',
  'maxCount',
  'chancePercentB',
] as const

/** Which constraint fields each type has. */
export const TYPE_CONSTRAINTS: Record<FlagType, readonly (keyof FlagConstraints)[]> = {
  BOOLEAN: [],
  INTEGER: ['minValue', 'maxValue'],
  STRING: ['maxLength', 'regexPattern'],
  ENUM: ['enumValues'],
  TAG: ['enumValues', 'minCount', 'maxCount'],
  'AB-TEST': ['chancePercentB'],
}

/** Fields every definition has besides constraints. */
export const COMMON_FIELDS = ['type', 'description', 'defaultValue', 'valueExists', 'value'] as const

/** True when `t` is one of the six types. */
export function isFlagType(t: unknown): t is FlagType {
  return typeof t === 'string' && (FLAG_TYPES as readonly string[]).includes(t)
}

/** The type's zero value: `false`, `0`, `""`, the first enum value, `[]`, `"A"`. */
export function zeroValue(type: FlagType, enumValues?: readonly string[]): FlagValue {
  switch (type) {
    case 'BOOLEAN':
      return false
    case 'INTEGER':
      return 0
    case 'STRING':
      return ''
    case 'ENUM':
      return enumValues?.[0] ?? ''
    case 'TAG':
      return []
    case 'AB-TEST':
      return 'A'
  }
}

/** The definition fields of a flag in contract order, built from an allow-list (export and API). */
export function definitionOf(f: FlagDefinition): FlagDefinition {
  const out: FlagDefinition = { type: f.type, description: f.description, defaultValue: f.defaultValue, valueExists: f.valueExists }
  if (f.valueExists && f.value !== undefined) out.value = f.value
  for (const key of CONSTRAINT_FIELDS) if (f[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = f[key]
  return out
}

/** The flag as the API shows it: name, definition, history. */
export function toFlagResource(f: Flag): Record<string, unknown> {
  return { name: f.name, ...definitionOf(f), createdAt: f.createdAt, updatedAt: f.updatedAt, revision: f.revision }
}
