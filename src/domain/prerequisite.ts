/**
 * Prerequisites (docs/api.md#prerequisites): a flag may require other flags, evaluated in the same
 * environment, to answer one of some of their variants; while one does not, it gives its default
 * answer. A shared field, one list for every environment.
 */

/** One prerequisite: the flag required and the variants of it that satisfy the requirement. */
export interface Prerequisite {
  flag: string
  variants: string[]
}

/** At most this many prerequisites on one flag. */
export const PREREQUISITES_MAX = 10

/** At most this many links below any flag (F←E←D←C←B←A is the longest chain F may have). */
export const PREREQUISITE_CHAIN_MAX = 5

/** At most this many variants named by one prerequisite (a flag has at most 100 of its own, plus built-in ones). */
export const PREREQUISITE_VARIANTS_MAX = 1_100

/**
 * Checks `input.prerequisites` (absent, `null` or `[]`: none) for its shape alone, filling `out`
 * with the valid list: at most ten, each `{flag, variants}` with a flag name and one or more variant
 * names, no flag twice, no variant twice. Whether the flags and variants exist, and the chains they
 * make, is the store's check (`prerequisite-graph.ts`): it sees every flag.
 */
export function checkPrerequisites(
  input: Record<string, unknown>,
  out: { prerequisites?: Prerequisite[] },
  problem: (field: string, reason: string) => void,
): void {
  const raw = input.prerequisites
  if (raw === undefined || raw === null) return
  if (!Array.isArray(raw)) problem('prerequisites', 'must be an array of {flag, variants}')
  else if (raw.length > PREREQUISITES_MAX) problem('prerequisites', `must have at most ${PREREQUISITES_MAX} prerequisites`)
  else {
    const list: Prerequisite[] = []
    const seen = new Set<string>()
    raw.forEach((item: unknown, i) => {
      const found = itemProblem(item, seen)
      if (found === undefined) list.push({ flag: (item as Prerequisite).flag, variants: [...(item as Prerequisite).variants] })
      else problem(`prerequisites[${i}]${found[0]}`, found[1])
    })
    if (list.length === raw.length && list.length > 0) out.prerequisites = list
  }
}

/** What is wrong with one prerequisite as given (`[field suffix, reason]`), or `undefined`; adds its flag to `seen`. */
function itemProblem(item: unknown, seen: Set<string>): [string, string] | undefined {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return ['', 'must be an object {flag, variants}']
  const { flag, variants, ...rest } = item as Record<string, unknown>
  const extra = Object.keys(rest)[0]
  if (extra !== undefined) return [`.${extra}`, 'unknown field (a prerequisite has flag and variants)']
  if (typeof flag !== 'string' || flag.length === 0 || flag.length > 255) return ['.flag', 'must be a flag name']
  if (seen.has(flag)) return ['.flag', `names ${flag} a second time: list all its variants in one prerequisite`]
  seen.add(flag)
  if (!Array.isArray(variants) || variants.length === 0) return ['.variants', 'must be a non-empty array of variant names of that flag']
  if (variants.length > PREREQUISITE_VARIANTS_MAX) return ['.variants', `must have at most ${PREREQUISITE_VARIANTS_MAX} names`]
  const bad = variants.findIndex((v) => typeof v !== 'string' || v.length === 0 || v.length > 1_000)
  if (bad >= 0) return [`.variants[${bad}]`, 'must be a variant name']
  const repeated = variants.findIndex((v, j) => variants.indexOf(v) !== j)
  if (repeated >= 0) return [`.variants[${repeated}]`, `repeats ${JSON.stringify(variants[repeated])}`]
  return undefined
}
