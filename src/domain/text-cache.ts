/**
 * A cache of rendered texts bounded by their total size as well as their count. Entry ceilings
 * alone let a cache of large answers grow without limit (1,000 bulk evaluations of 20,000 flags
 * held 1.8 GB); here, past `maxChars` (UTF-16 code units, two bytes each in memory), the oldest
 * entries go, and a text larger than the whole budget is not kept at all. A text may carry something
 * attached to it (what it was made of), which is kept and dropped with it.
 */

/** The cache (see module comment). */
export class TextCache<K, A = undefined> {
  private readonly entries = new Map<K, { text: string; attached: A }>()
  private chars = 0

  constructor(
    readonly maxChars: number,
    readonly maxEntries = 10_000,
  ) {
    if (!(maxChars >= 1 && maxEntries >= 1)) throw new RangeError('a text cache needs room for at least one entry')
  }

  /** The text kept for `key`, if any. */
  get(key: K): string | undefined {
    return this.entries.get(key)?.text
  }

  /** The text kept for `key` with what was attached to it, if any. */
  entry(key: K): { readonly text: string; readonly attached: A } | undefined {
    return this.entries.get(key)
  }

  /** Keeps `text` (and `attached`) for `key`, first dropping the oldest texts until it fits. */
  set(key: K, text: string, attached: A = undefined as A): void {
    this.delete(key)
    if (text.length > this.maxChars) return
    while (this.entries.size > 0 && (this.chars + text.length > this.maxChars || this.entries.size >= this.maxEntries)) {
      const oldest = this.entries.keys().next().value as K
      this.delete(oldest)
    }
    this.entries.set(key, { text, attached })
    this.chars += text.length
  }

  /** Forgets `key`. */
  delete(key: K): void {
    const old = this.entries.get(key)
    if (old === undefined) return
    this.entries.delete(key)
    this.chars -= old.text.length
  }

  /** Forgets everything. */
  clear(): void {
    this.entries.clear()
    this.chars = 0
  }

  /** The texts kept and their total length (for tests and metrics). */
  get size(): { entries: number; chars: number } {
    return { entries: this.entries.size, chars: this.chars }
  }
}
