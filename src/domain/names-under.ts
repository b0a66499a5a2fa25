/**
 * The names under a prefix in a list sorted by code unit (flag names in name order): found by binary
 * search, so a confined caller's read costs its own flags, not the whole list.
 */

/** The names of sorted `names` that start with `prefix`, in order. */
export function namesUnder(names: readonly string[], prefix: string): string[] {
  let lo = 0
  let hi = names.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((names[mid] as string) < prefix) lo = mid + 1
    else hi = mid
  }
  const out: string[] = []
  for (let i = lo; i < names.length && (names[i] as string).startsWith(prefix); i++) out.push(names[i] as string)
  return out
}
