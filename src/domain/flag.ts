/**
 * Flags: the eight types, the fields each type has, the resource shape (docs/api.md#flags, docs/targeting.md#rules), and
 * the type's zero value. Validation lives in `flag-definition.ts`.
 */

import type { FlagKind } from './flag-lifecycle.ts'
import type { Prerequisite } from './prerequisite.ts'
import type { Rollout } from './rollout.ts'
import { rolloutRead } from './rollout-status.ts'

export const FLAG_TYPES = ['BOOLEAN', 'INTEGER', 'STRING', 'ENUM', 'TAG', 'AB-TEST', 'NUMBER', 'OBJECT'] as const

/** One of the eight flag types. */
export type FlagType = (typeof FLAG_TYPES)[number]

/** A JSON object (an OBJECT flag's value, a rule, a JSON Schema). */
export type JsonObject = { [key: string]: unknown }

/** A value of some flag type. */
export type FlagValue = boolean | number | string | string[] | JsonObject

/** A flag's metadata value (docs/targeting.md#rules). */
export type MetadataValue = string | number | boolean

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
  /** OBJECT: a JSON Schema (draft 2020-12) the default, the value and every variant satisfy. */
  jsonSchema?: JsonObject
}

/** The targeting fields of docs/targeting.md#rules. */
export interface TargetingFields {
  /** Variant name → value; built-in variants (BOOLEAN, AB-TEST, ENUM) exist without being listed. */
  variants?: Record<string, FlagValue>
  /** A rule of flagd's JsonLogic dialect. */
  targeting?: JsonObject
  /** False: OFREP answers DISABLED and the application's own default applies. Absent means true. */
  enabled?: boolean
  metadata?: Record<string, MetadataValue>
  /** A progressive rollout of one variant (docs/change-control.md#progressive-rollouts), per environment. */
  rollout?: Rollout
}

/** The lifecycle fields of docs/api.md#lifecycle: shared by every environment, each absent when not set. */
export interface LifecycleFields {
  /** Absent: `release`. */
  kind?: FlagKind
  owner?: string
  tags?: string[]
  /** The flags this one requires, in the same environment (docs/api.md#prerequisites). Absent: none. */
  prerequisites?: Prerequisite[]
}

/** What defines a flag: everything but its name and history. */
export interface FlagDefinition extends FlagConstraints, TargetingFields, LifecycleFields {
  type: FlagType
  description: string
  /** `null`: no default, the application's own applies (flagd's missing `defaultVariant`, docs/targeting.md#flagd-format). */
  defaultValue: FlagValue | null
  valueExists: boolean
  value?: FlagValue
}

/** A flag as one environment sees it (a view of a stored `FlagRow`). Objects are never changed in place. */
export interface Flag extends FlagDefinition {
  /** Stable internal id (`flg_…`): survives renames, so history can follow a flag. Never shown. */
  id: string
  name: string
  createdAt: string
  updatedAt: string
  revision: number
  /** The revision this environment last saw the flag change at, when older than `revision` (docs/environments.md#revisions). */
  servedRevision?: number
  /** Archived (docs/api.md#archive): kept, but unknown to every evaluation path. Stored only when true. */
  archived?: true
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
  'jsonSchema',
] as const

/** Targeting fields in output order (after the constraints). */
export const TARGETING_FIELDS = ['enabled', 'variants', 'targeting', 'metadata', 'rollout'] as const

/** Lifecycle fields in output order (after the targeting fields). */
export const LIFECYCLE_FIELDS = ['kind', 'owner', 'tags', 'prerequisites'] as const

/** Which constraint fields each type has. */
export const TYPE_CONSTRAINTS: Record<FlagType, readonly (keyof FlagConstraints)[]> = {
  BOOLEAN: [],
  INTEGER: ['minValue', 'maxValue'],
  STRING: ['maxLength', 'regexPattern'],
  ENUM: ['enumValues'],
  TAG: ['enumValues', 'minCount', 'maxCount'],
  'AB-TEST': ['chancePercentB'],
  NUMBER: ['minValue', 'maxValue'],
  OBJECT: ['jsonSchema'],
}

/** Fields every definition has besides constraints. */
export const COMMON_FIELDS = ['type', 'description', 'defaultValue', 'valueExists', 'value'] as const

/** True when `t` is one of the six types. */
export function isFlagType(t: unknown): t is FlagType {
  return typeof t === 'string' && (FLAG_TYPES as readonly string[]).includes(t)
}

/** The type's zero value: `false`, `0`, `""`, the first enum value, `[]`, `"A"`, `0`, `{}`. */
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
    case 'NUMBER':
      return 0
    case 'OBJECT':
      return {}
  }
}

/** The built-in variants of a type: BOOLEAN `true`/`false`, AB-TEST `A`/`B`, ENUM one per value. */
export function builtInVariants(type: FlagType, enumValues?: readonly string[]): Record<string, FlagValue> {
  switch (type) {
    case 'BOOLEAN':
      return { true: true, false: false }
    case 'AB-TEST':
      return { A: 'A', B: 'B' }
    case 'ENUM':
      return Object.fromEntries((enumValues ?? []).map((v) => [v, v]))
    default:
      return {}
  }
}

/** Every variant of a flag: the built-in ones, replaced or joined by those it lists. */
export function allVariants(f: Pick<FlagDefinition, 'type' | 'enumValues' | 'variants'>): Record<string, FlagValue> {
  const builtIn = builtInVariants(f.type, f.enumValues)
  return f.variants ? { ...builtIn, ...f.variants } : builtIn
}

/** True unless the flag is switched off (`enabled: false`). */
export const isEnabled = (f: TargetingFields): boolean => f.enabled !== false

/**
 * The definition fields of a flag in contract order, built from an allow-list (export and API):
 * `enabled` always (flags stored before targeting existed read as enabled), the other targeting
 * and lifecycle fields when set.
 */
export function definitionOf(f: FlagDefinition): FlagDefinition {
  const out: FlagDefinition = { type: f.type, description: f.description, defaultValue: f.defaultValue, valueExists: f.valueExists }
  if (f.valueExists && f.value !== undefined) out.value = f.value
  for (const key of CONSTRAINT_FIELDS) if (f[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = f[key]
  out.enabled = isEnabled(f)
  if (f.variants !== undefined) out.variants = f.variants
  if (f.targeting !== undefined) out.targeting = f.targeting
  if (f.metadata !== undefined) out.metadata = f.metadata
  if (f.rollout !== undefined) out.rollout = f.rollout
  if (f.kind !== undefined) out.kind = f.kind
  if (f.owner !== undefined) out.owner = f.owner
  if (f.tags !== undefined) out.tags = f.tags
  if (f.prerequisites !== undefined) out.prerequisites = f.prerequisites
  return out
}

/** True when the flag is archived (docs/api.md#archive). */
export const isArchived = (f: Pick<Flag, 'archived'>): boolean => f.archived === true

/**
 * The flag as the API shows it at `nowMs`: name, definition (`kind` and `tags` always,
 * docs/api.md#lifecycle), history, whether it is archived, and `potentiallyStale` when the reader
 * knows it; its rollout with its read-only `status` and `percent` then, never what the server keeps
 * on it (docs/guarded-rollouts.md#status-and-percent).
 */
export function toFlagResource(f: Flag, nowMs: number, potentiallyStale?: boolean): Record<string, unknown> {
  const definition = definitionOf(f)
  if (definition.rollout !== undefined) (definition as unknown as Record<string, unknown>).rollout = rolloutRead(definition.rollout, nowMs)
  return {
    name: f.name,
    ...definition,
    kind: f.kind ?? 'release',
    tags: f.tags ?? [],
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
    revision: f.revision,
    archived: isArchived(f),
    ...(potentiallyStale === undefined ? {} : { potentiallyStale }),
  }
}
