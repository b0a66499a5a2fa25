/**
 * "Did you mean …?" for a word flagd does not know (an unknown body field or query parameter, a
 * command-line option, a configuration key or variable): the known word closest to it, so a typo
 * is refused with its fix beside it (docs/api.md#conventions, docs/configuration.md).
 */

/** Words longer than this get no suggestion: no known word is near, and comparing costs length². */
const MAX_WORD = 128

/** Edit distance counting a swap of two neighbours as one edit (optimal string alignment). */
function editDistance(a: string, b: string): number {
  let before: number[] = []
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min((row[j] as number) + 1, (next[j - 1] as number) + 1, (row[j - 1] as number) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] as number) + 1)
      next[j] = d
    }
    before = row
    row = next
  }
  return row[b.length] as number
}

/**
 * The known word closest to `word` (case ignored), or `undefined` when none is close: within a
 * third of the word's length (at least one edit). `anyDistance` names the closest however far, for
 * lists where every candidate is one of flagd's own names (configuration keys).
 */
export function closestSpelling(word: string, known: Iterable<string>, options: { anyDistance?: boolean } = {}): string | undefined {
  if (word.length > MAX_WORD) return undefined
  const lower = word.toLowerCase()
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of known) {
    const limit = options.anyDistance ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor(candidate.length / 3))
    // the distance is at least the difference in length: skip what cannot be near
    if (Math.abs(candidate.length - word.length) > Math.min(limit, bestDistance)) continue
    const d = editDistance(lower, candidate.toLowerCase())
    if (d <= limit && d < bestDistance) [best, bestDistance] = [candidate, d]
  }
  return best
}

/** The reason given for an unknown field: `unknown field`, with the field it probably meant when one is close. */
export function unknownFieldReason(field: string, known: Iterable<string>, what = 'unknown field'): string {
  const closest = closestSpelling(field, known)
  return closest === undefined ? what : `${what}; did you mean "${closest}"?`
}
