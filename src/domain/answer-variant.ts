/**
 * The variant name of a flag's answer without a rule, the same on every path: OFREP, the flagd
 * document (export and in-process sync) and usage (docs/openfeature.md#variant-names). Where the
 * flag lists variants and one of them holds the answer (an imported flagd flag's `defaultVariant`),
 * that name; otherwise `value` for a set value and `default` for the default, or, should the flag
 * have a variant of that name holding something else, that name with the revision the environment
 * last saw the flag change at appended (so a change confined to another environment leaves it). An
 * A/B test's answer is its built-in variant `A` or `B`, named as its value.
 */

import { allVariants, type Flag, type FlagValue } from './flag.ts'

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b)

/** The answer of `flag` without a rule, and its variant name; `undefined` when it has none (no default). */
export function answerVariant(flag: Flag): { value: FlagValue; variant: string } | undefined {
  const value = (flag.valueExists ? flag.value : flag.defaultValue) as FlagValue | null | undefined
  if (value === null || value === undefined) return undefined
  if (flag.type === 'AB-TEST') return { value, variant: String(value) }
  const listed = flag.variants ?? {}
  for (const name of Object.keys(listed)) if (same(listed[name], value)) return { value, variant: name }
  const base = flag.valueExists ? 'value' : 'default'
  const all = allVariants(flag)
  if (!Object.hasOwn(all, base) || same(all[base], value)) return { value, variant: base }
  return { value, variant: `${base}-${flag.servedRevision ?? flag.revision}` }
}
