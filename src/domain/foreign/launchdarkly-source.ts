/**
 * LaunchDarkly's files read into one shape (docs/migrations.md#from-launchdarkly): its flag data as
 * the SDKs and the relay read it (`{flags, segments, flagValues}`, the file data source's shape) and
 * the items of its REST API's flag list (`{items: [...]}` or the bare array), whose targeting lives
 * per environment. Only the shapes are read here; what they mean is translated elsewhere.
 */

import type { FieldProblem } from '../errors.ts'

/** A flag as LaunchDarkly evaluates it, in one environment. */
export interface LdFlag {
  key: string
  on: boolean
  variations: unknown[]
  /** REST variation names, by index. */
  names: (string | undefined)[]
  offVariation?: unknown
  fallthrough?: unknown
  targets?: unknown
  contextTargets?: unknown
  rules?: unknown
  prerequisites?: unknown
  deleted?: unknown
  description?: string
  tags?: unknown
  temporary?: unknown
}

/** A file read: the flags (in the file's order), the segments by key, and what the reading says. */
export interface LdSource {
  flags: LdFlag[]
  segments: Map<string, Record<string, unknown>>
  warnings: FieldProblem[]
  /** Flags of the REST list without the chosen environment, with the reason. */
  missing: { name: string; reason: string }[]
  /** The REST list's environment read; the SDK's flag data holds one, unnamed. */
  environment?: string
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const DATA_KEYS = new Set(['flags', 'segments', 'flagValues'])

/** True for a flag of the SDK's data: an object with a `variations` list and an `on` switch. */
const isSdkFlag = (v: unknown): boolean => isObject(v) && Array.isArray(v.variations) && typeof v.on === 'boolean'

/** True for an item of the REST flag list: a `key`, a `variations` list and `environments`. */
const isRestItem = (v: unknown): boolean =>
  isObject(v) && typeof v.key === 'string' && Array.isArray(v.variations) && isObject(v.environments)

/** The items of a REST flag list, or `undefined` when `raw` is none. */
function restItems(raw: unknown): unknown[] | undefined {
  if (Array.isArray(raw)) return raw.length > 0 && raw.every(isRestItem) ? raw : undefined
  if (isObject(raw) && Array.isArray(raw.items) && raw.items.every(isRestItem)) return raw.items
  return undefined
}

/** True when `raw` is SDK flag data: only `flags`, `segments`, `flagValues`, and every flag LaunchDarkly-shaped. */
function isSdkData(raw: unknown): raw is Record<string, unknown> {
  if (!isObject(raw)) return false
  const keys = Object.keys(raw)
  if (keys.length === 0 || !keys.every((k) => DATA_KEYS.has(k))) return false
  if (raw.flags !== undefined && !(isObject(raw.flags) && Object.values(raw.flags).every(isSdkFlag))) return false
  if (raw.segments !== undefined && !isObject(raw.segments)) return false
  if (raw.flagValues !== undefined && !isObject(raw.flagValues)) return false
  return Object.keys(raw.flags ?? {}).length > 0 || raw.flagValues !== undefined || raw.segments !== undefined
}

/** True when `raw` is a LaunchDarkly file: its SDK flag data or its REST flag list. */
export function isLdShape(raw: unknown): boolean {
  return isSdkData(raw) || restItems(raw) !== undefined
}

/** The file read into one shape, or the problems that make it unreadable as a whole. */
export function readLdSource(raw: unknown, sourceEnvironment: string | undefined): LdSource | { problems: FieldProblem[] } {
  if (isSdkData(raw)) {
    const source = sdkSource(raw)
    // flag data as an SDK reads it is one environment's, which it does not name
    if (sourceEnvironment !== undefined)
      source.warnings.push({
        field: 'sourceEnvironment',
        reason: `LaunchDarkly's flag data holds one environment and does not name it: sourceEnvironment ${JSON.stringify(sourceEnvironment)} was not checked against it`,
      })
    return source
  }
  const items = restItems(raw)
  if (items !== undefined) return restSource(items as Record<string, unknown>[], sourceEnvironment)
  return {
    problems: [
      {
        field: 'body',
        reason:
          'not a LaunchDarkly file: expected its flag data ({"flags": {...}, "segments": {...}}) or its REST flag list ({"items": [...]})',
      },
    ],
  }
}

function sdkSource(raw: Record<string, unknown>): LdSource {
  const flags: LdFlag[] = []
  for (const [key, f] of Object.entries((raw.flags ?? {}) as Record<string, Record<string, unknown>>))
    flags.push({ ...f, key, on: f.on as boolean, variations: f.variations as unknown[], names: [] })
  // the file data source's simple form: a flag that is on and always serves its one value
  for (const [key, value] of Object.entries((raw.flagValues ?? {}) as Record<string, unknown>))
    flags.push({ key, on: true, variations: [value], names: [], fallthrough: { variation: 0 } })
  const segments = new Map<string, Record<string, unknown>>()
  for (const [key, s] of Object.entries((raw.segments ?? {}) as Record<string, unknown>))
    if (isObject(s) && s.deleted !== true) segments.set(key, s)
  return { flags, segments, warnings: [], missing: [] }
}

function restSource(items: Record<string, unknown>[], asked: string | undefined): LdSource | { problems: FieldProblem[] } {
  const all = [...new Set(items.flatMap((i) => Object.keys(i.environments as object)))]
  const first = Object.keys(items[0]?.environments as object)[0]
  const env = asked ?? first
  if (env === undefined || !all.includes(env))
    return {
      problems: [
        {
          field: 'sourceEnvironment',
          reason: `${env === undefined ? 'no environment' : `no environment ${JSON.stringify(env)}`} in the file (it has: ${all.join(', ') || 'none'})`,
        },
      ],
    }
  const warnings: FieldProblem[] = [
    {
      field: 'sourceEnvironment',
      reason: `flags read from the LaunchDarkly environment ${JSON.stringify(env)}${asked === undefined ? ' (the first in the file)' : ''}; the file has: ${all.join(', ')}`,
    },
  ]
  const flags: LdFlag[] = []
  const missing: { name: string; reason: string }[] = []
  for (const item of items) {
    const key = item.key as string
    const settings = (item.environments as Record<string, unknown>)[env]
    if (!isObject(settings)) {
      missing.push({ name: key, reason: `has no settings for the environment ${JSON.stringify(env)}` })
      continue
    }
    const variations = item.variations as unknown[]
    const description = typeof item.description === 'string' && item.description !== '' ? item.description : item.name
    flags.push({
      ...settings,
      key,
      on: settings.on === true,
      variations: variations.map((v) => (isObject(v) ? v.value : undefined)),
      names: variations.map((v) => (isObject(v) && typeof v.name === 'string' ? v.name : undefined)),
      deleted: item.archived === true ? true : settings.deleted,
      ...(typeof description === 'string' ? { description } : {}),
      tags: item.tags,
      temporary: item.temporary,
    })
  }
  return { flags, segments: new Map(), warnings, missing, environment: env }
}
