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
  return Array.isArray(v) ? listSize(v) : objectSize(v as Record<string, unknown>)
}

/**
 * A list's size in one walk. A short flat list (a split's buckets, `in`'s literal values) is walked
 * without a lookup; a long one, or one that holds lists or objects (a part that may be shared), is
 * looked up first and remembered.
 */
function listSize(list: readonly unknown[]): number {
  let remembered = list.length >= REMEMBER_FROM
  if (remembered) {
    const known = measured.get(list)
    if (known !== undefined) return known
  }
  let size = 1
  for (const item of list) {
    if (!remembered && item !== null && typeof item === 'object') {
      remembered = true
      const known = measured.get(list)
      if (known !== undefined) return known
    }
    size += valueSize(item)
  }
  if (remembered) measured.set(list, size)
  return size
}

/** An object's size, remembered (objects come from the context, parsed once per request). */
function objectSize(v: Record<string, unknown>): number {
  const known = measured.get(v)
  if (known !== undefined) return known
  let size = 1
  for (const key in v) if (Object.hasOwn(v, key)) size += 1 + (key.length >> 4) + valueSize(v[key])
  measured.set(v, size)
  return size
}
