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
