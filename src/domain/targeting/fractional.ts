/**
 * flagd's `fractional` operator, bucketing v2 (custom-operations/fractional-operation): the bucket
 * key (the first argument when it is a string, else the flag key followed by the `targetingKey`) is
 * hashed with MurmurHash3 x86 32-bit, seed 0, over its UTF-8 bytes, as flagd does; the hash scaled by
 * the total weight, `(hash × total) >> 32`, picks the bucket. Weights are integers (default 1,
 * negative ones count as 0). Bad input (no bucket key, a bucket that is not `[variant, weight?]`, a
 * weight that is not an integer, no weight at all, a total above 2^31 − 1) gives `null`.
 */

const MAX_TOTAL_WEIGHT = 2_147_483_647

/** `floor(hash × total / 2^32)` exactly, for a 32-bit `hash` and `total` < 2^31, without BigInt. */
export function scaleHash(hash: number, total: number): number {
  const high = Math.floor(hash / 65_536) * total // < 2^47: exact
  const low = (hash % 65_536) * total // < 2^47: exact
  const highUpper = Math.floor(high / 65_536)
  return highUpper + Math.floor(((high % 65_536) * 65_536 + low) / 4_294_967_296)
}

/** The unsigned MurmurHash3 x86 32-bit (seed 0) of a string's UTF-8 bytes. */
export function bucketHash(key: string): number {
  return Bun.hash.murmur32v3(key, 0)
}

/** Buckets checked and summed once: each one's variant and the running total of weights at its end. */
export interface BucketTable {
  variants: unknown[]
  ends: number[]
  total: number
}

/** The table of `buckets` (each `[variant]` or `[variant, weight]`, already evaluated); `undefined` when malformed or too heavy. */
export function bucketTable(buckets: readonly unknown[]): BucketTable | undefined {
  const variants: unknown[] = []
  const ends: number[] = []
  let total = 0
  for (const bucket of buckets) {
    if (!Array.isArray(bucket) || bucket.length === 0 || bucket.length > 2) return undefined
    const v = bucket[0]
    if (v !== null && v !== undefined && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return undefined
    if (bucket.length === 2) {
      const w = bucket[1]
      if (typeof w !== 'number' || !Number.isInteger(w)) return undefined
      total += Math.max(0, w)
    } else total += 1
    variants.push(v ?? null)
    ends.push(total)
  }
  return total > MAX_TOTAL_WEIGHT ? undefined : { variants, ends, total }
}

/** The bucket of `table` that `bucketKey` falls in (the first whose end passes its scaled hash); `undefined` when it weighs nothing. */
export function pickFromTable(table: BucketTable, bucketKey: string): { variant: unknown; value: number; total: number } | undefined {
  const value = scaleHash(bucketHash(bucketKey), table.total)
  let lo = 0
  let hi = table.ends.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((table.ends[mid] as number) > value) hi = mid
    else lo = mid + 1
  }
  return lo < table.ends.length ? { variant: table.variants[lo], value, total: table.total } : undefined
}

/**
 * Picks a bucket's variant for `bucketKey` among `buckets` (each `[variant]` or `[variant, weight]`,
 * already evaluated); `undefined` when the buckets are malformed or weigh nothing.
 */
export function pickBucket(bucketKey: string, buckets: readonly unknown[]): { variant: unknown; value: number; total: number } | undefined {
  const table = bucketTable(buckets)
  return table === undefined ? undefined : pickFromTable(table, bucketKey)
}

/** True when every bucket of a split is `[variant, 0]` (a leading bucket key aside). */
export function weighsNothing(buckets: readonly unknown[]): boolean {
  const weighed = buckets.filter((b, i) => Array.isArray(b) || i > 0)
  return weighed.length > 0 && weighed.every((b) => Array.isArray(b) && b.length === 2 && b[1] === 0)
}
