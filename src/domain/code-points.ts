/**
 * Counting characters as the contract does, in Unicode code points, without walking a huge string
 * to the end: a 1 MB password or value needs only to be seen to be over its limit.
 */

/** The number of code points in `s`, counting no further than `cap + 1` (enough to tell "over `cap`"). */
export function codePointCount(s: string, cap = Number.POSITIVE_INFINITY): number {
  if (s.length <= cap) {
    // at most s.length code points: count them all (cheap, and exact)
    let n = 0
    for (const _ of s) n++
    return n
  }
  if (s.length > 2 * cap) return cap + 1 // every code point is one or two UTF-16 units
  let n = 0
  for (const _ of s) if (++n > cap) return n
  return n
}
