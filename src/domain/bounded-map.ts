/**
 * A Map with a ceiling on its entries: past it, the oldest entry (by insertion) is dropped. flagd's
 * caches and per-key tables (verified tokens, route templates, metric children, login-throttle keys)
 * all use this one structure, so none of them can grow without limit under hostile input.
 */

/** The bounded map (see module comment). */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly maxEntries: number) {
    super()
    if (!(maxEntries >= 1)) throw new RangeError('a bounded map needs room for at least one entry')
  }

  /** Sets `key`, first dropping the oldest entry when a new key would exceed the ceiling. */
  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.maxEntries) {
      const oldest = this.keys().next()
      if (!oldest.done) this.delete(oldest.value)
    }
    return super.set(key, value)
  }
}
