/**
 * The one cache of what a request made for the requests after it (docs/architecture.md#caching):
 * rendered flag lists, bulk evaluations, a scope's bulk template, the contexts seen lately, known
 * credentials and verified tokens, sync documents and their encodings. Everything keyed by request data lives here, under one byte
 * budget and one invalidation rule:
 *
 * - an entry is kept for the revision it was made from (the flags' revision, or the committed
 *   state's for credentials); a request that sees a newer revision drops its region's older entries
 *   at once, so nothing outlives the data it was made of;
 * - what also depends on time carries the time in its key (a bulk ETag names the second when a
 *   rule reads `$flagd.timestamp`) or a deadline of its own (`until`), past which it is not served;
 * - past the budget the least recently used entries go, whichever region they are in, and a value
 *   larger than a quarter of the budget is not kept at all.
 *
 * Regions are named for `size()` (tests, metrics). Sizes are estimates: two bytes per character of
 * a string (V8 and JavaScriptCore may keep one), the byte length of binary data, and a fixed
 * overhead per entry for its key and bookkeeping.
 */

/** What one entry costs besides its value: the key, the map's slot, the entry object. */
const ENTRY_OVERHEAD = 96

/** An entry: its value, an optional deadline (ms), its cost, and when it was kept and last used. */
interface Entry {
  value: unknown
  until: number
  bytes: number
  kept: number
  used: number
}

/** One kind of cached value (see module comment). */
export interface CacheRegion<V> {
  /** The value kept for `key` at `revision` (and before `now`, when it has a deadline), if any. */
  get(key: string, revision: number, now?: number): V | undefined
  /** Keeps `value` for `key`, made from `revision`; `until` (ms) is when it stops being served. */
  set(key: string, revision: number, value: V, until?: number): void
  /** `get`, or `make()` kept and returned. */
  through(key: string, revision: number, make: () => V): V
  /** Forgets `key`. */
  delete(key: string): void
}

/**
 * The key of what one scope is served: the environment (`undefined`: the default one) and the
 * flag-name prefixes, written so that no two scopes share a key. `[]` and `['']` differ: as a
 * list's prefixes the first is no flag at all (a confined caller whose scope misses the query),
 * the second every flag (docs/architecture.md#caching).
 */
export const scopeKey = (env: string | undefined, prefixes: readonly string[]): string => JSON.stringify([env ?? null, prefixes])

/** The estimated bytes of a string. */
export const textBytes = (text: string): number => 2 * text.length

/** The cache (see module comment). */
export class RequestCache {
  private readonly regions: Region<never>[] = []
  private bytes = 0
  private tick = 0

  constructor(readonly maxBytes: number) {
    if (!(maxBytes >= 1024)) throw new RangeError('the request cache needs at least 1 KiB')
  }

  /** A new region, `sizeOf` estimating a value's bytes (its key and entry are counted besides). */
  region<V>(name: string, sizeOf: (value: V) => number): CacheRegion<V> {
    const region = new Region<V>(name, sizeOf, this)
    this.regions.push(region as unknown as Region<never>)
    return region
  }

  /** What is kept now, in all and by region. */
  size(): { entries: number; bytes: number; regions: Record<string, { entries: number; bytes: number }> } {
    const regions: Record<string, { entries: number; bytes: number }> = {}
    let entries = 0
    for (const r of this.regions) {
      const mine = regions[r.name] ?? { entries: 0, bytes: 0 }
      mine.entries += r.map.size
      mine.bytes += r.bytes
      regions[r.name] = mine
      entries += r.map.size
    }
    return { entries, bytes: this.bytes, regions }
  }

  /** @internal The next moment of use. */
  now(): number {
    return ++this.tick
  }

  /** @internal Makes room for `bytes` (false when the value is too large to keep at all). */
  room(bytes: number): boolean {
    if (bytes > this.maxBytes / 2) return false
    while (this.bytes + bytes > this.maxBytes && this.evictOne());
    this.bytes += bytes
    return true
  }

  /** @internal Gives back what an entry cost. */
  release(bytes: number): void {
    this.bytes -= bytes
  }

  /**
   * Drops the least recently used entry. Each region's map is in the order entries were kept; a
   * hit only stamps `used` (cheap on the hot path), so an oldest entry used since it was kept goes
   * to the back of its region instead (a second chance), which is least-recently-used order.
   */
  private evictOne(): boolean {
    for (;;) {
      let from: Region<never> | undefined
      let first: [string, Entry] | undefined
      for (const r of this.regions) {
        const head = r.map.entries().next().value
        if (head !== undefined && (first === undefined || head[1].kept < first[1].kept)) [from, first] = [r, head]
      }
      if (from === undefined || first === undefined) return false
      const [key, entry] = first
      from.map.delete(key)
      if (entry.used > entry.kept) {
        entry.kept = entry.used = this.now()
        from.map.set(key, entry)
        continue
      }
      from.bytes -= entry.bytes
      this.bytes -= entry.bytes
      return true
    }
  }
}

class Region<V> implements CacheRegion<V> {
  revision = -1
  readonly map = new Map<string, Entry>()
  bytes = 0

  constructor(
    readonly name: string,
    private readonly sizeOf: (value: V) => number,
    private readonly cache: RequestCache,
  ) {}

  get(key: string, revision: number, now = 0): V | undefined {
    if (revision !== this.revision) {
      if (revision > this.revision) this.moveTo(revision)
      return undefined
    }
    const entry = this.map.get(key)
    if (entry === undefined) return undefined
    if (now >= entry.until) {
      this.delete(key)
      return undefined
    }
    entry.used = this.cache.now()
    return entry.value as V
  }

  set(key: string, revision: number, value: V, until = Number.POSITIVE_INFINITY): void {
    if (revision > this.revision) this.moveTo(revision)
    this.delete(key)
    if (revision !== this.revision) return // made from an older revision than the region holds
    const bytes = this.sizeOf(value) + ENTRY_OVERHEAD + 2 * key.length
    if (!this.cache.room(bytes)) return
    const at = this.cache.now()
    this.map.set(key, { value, until, bytes, kept: at, used: at })
    this.bytes += bytes
  }

  through(key: string, revision: number, make: () => V): V {
    const kept = this.get(key, revision)
    if (kept !== undefined) return kept
    const made = make()
    this.set(key, revision, made)
    return made
  }

  delete(key: string): void {
    const entry = this.map.get(key)
    if (entry === undefined) return
    this.map.delete(key)
    this.bytes -= entry.bytes
    this.cache.release(entry.bytes)
  }

  /** The region's data moved on: everything it kept from before goes. */
  private moveTo(revision: number): void {
    this.cache.release(this.bytes)
    this.map.clear()
    this.bytes = 0
    this.revision = revision
  }
}
