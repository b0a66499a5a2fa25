/**
 * The size of a value as the work budget counts it: one per scalar, list item and object member,
 * plus a sixteenth of the characters of every text. Lists a rule builds can share their parts
 * (`[acc, acc]` in a `reduce` doubles the size at each step while memory barely grows), so the size
 * is of the value written out, not of the memory it holds: the work any later reading of it does
 * (turning it into text, comparing it, answering it). A list or object is measured once and
 * remembered, so measuring a shared structure costs its distinct parts, not its written-out size.
 */

const measured = new WeakMap<object, number>()

/** Lists this long or with nested parts are remembered; short flat lists are cheaper to walk again. */
const REMEMBER_FROM = 32

/** The written-out size of `v` (see module comment). */
export function valueSize(v: unknown): number {
  if (typeof v === 'string') return 1 + (v.length >> 4)
  if (v === null || typeof v !== 'object') return 1
  if (Array.isArray(v) && v.length < REMEMBER_FROM) {
    // short flat lists (a split's buckets, `in`'s literal values): walked, never looked up
    let size = 1
    for (const item of v) {
      if (item !== null && typeof item === 'object') {
        size = -1
        break
      }
      size += typeof item === 'string' ? 1 + (item.length >> 4) : 1
    }
    if (size > 0) return size
  }
  const known = measured.get(v)
  if (known !== undefined) return known
  let size = 1
  let nested = false
  if (Array.isArray(v)) {
    for (const item of v) {
      if (item !== null && typeof item === 'object') nested = true
      size += valueSize(item)
    }
    if (nested || v.length >= REMEMBER_FROM) measured.set(v, size)
    return size
  }
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue
    size += 1 + (key.length >> 4) + valueSize((v as Record<string, unknown>)[key])
  }
  measured.set(v, size)
  return size
}
