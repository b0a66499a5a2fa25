/**
 * A LaunchDarkly flag's variations as flagd variants (docs/migrations.md#from-launchdarkly): the
 * flag's type from their values, and a name per variation: its REST `name` when that is a valid
 * variant name, else a boolean's `true`/`false` or a text value that is a valid name, else
 * `v<index>`; a name two variations would share goes to neither (each then takes `v<index>`).
 */

import type { FlagType } from '../flag.ts'
import { VARIANT_NAME } from '../variant-name.ts'
import { Unkept } from './launchdarkly-clause.ts'

/** The variants of a flag: its type, each variation's name by index, and name → value. */
export interface LdVariants {
  type: FlagType
  names: string[]
  variants: Record<string, unknown>
}

const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The flag type of a list of variation values, or the reason there is none. */
function typeOf(values: readonly unknown[]): FlagType {
  if (values.length === 0) throw new Unkept('it has no variations')
  if (values.every((v) => typeof v === 'boolean')) return 'BOOLEAN'
  if (values.every((v) => typeof v === 'number' && Number.isSafeInteger(v))) return 'INTEGER'
  if (values.every((v) => typeof v === 'number' && Number.isFinite(v))) return 'NUMBER'
  if (values.every((v) => typeof v === 'string')) return 'STRING'
  if (values.every(isObject)) return 'OBJECT'
  if (values.some((v) => v === null || v === undefined || Array.isArray(v)))
    throw new Unkept("a variation is a JSON list or null: flagd's flags hold a boolean, a number, a text or an object")
  throw new Unkept('its variations mix types (a flag of flagd has one type)')
}

/** The variants of `values` (with the REST `names` by index, where there are any). */
export function ldVariants(values: readonly unknown[], names: readonly (string | undefined)[]): LdVariants {
  const type = typeOf(values)
  const wanted = values.map((v, i) => {
    const given = names[i]
    if (given !== undefined && VARIANT_NAME.test(given)) return given
    if (typeof v === 'boolean') return String(v)
    if (typeof v === 'string' && VARIANT_NAME.test(v)) return v
    return undefined
  })
  const taken = new Set<string>()
  const counts = new Map<string, number>()
  for (const w of wanted) if (w !== undefined) counts.set(w, (counts.get(w) ?? 0) + 1)
  const chosen = wanted.map((w) => (w !== undefined && counts.get(w) === 1 ? w : undefined))
  for (const c of chosen) if (c !== undefined) taken.add(c)
  const out = chosen.map((c, i) => {
    if (c !== undefined) return c
    let name = `v${i}`
    for (let n = 2; taken.has(name); n++) name = `v${i}-${n}`
    taken.add(name)
    return name
  })
  const variants: Record<string, unknown> = {}
  out.forEach((name, i) => {
    variants[name] = values[i]
  })
  return { type, names: out, variants }
}
