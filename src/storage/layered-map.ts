/**
 * The maps of the store's state (docs/performance.md#writes): a large base shared by every version
 * and never changed, under a small layer of the rows changed since the base was made. A draft forks
 * the map it starts from, copying only the layer, so a commit costs its change and not the store's
 * size; before the Map copy per touched table was the largest cost of a write at 50,000 flags. When
 * the layer outgrows about the square root of twice the base, a fork makes a new base (one
 * copy of everything, paid once per that many changed rows). A layer of √(2n) rows makes the copies
 * of a fork and the new bases' share of a write equal: about √(2n) rows a commit, 141 at 10,000.
 *
 * Iteration follows a Map's order for what the store does: the base's rows in their order (a
 * replaced row keeps its place, a deleted one is skipped), then rows new since, in the order they came.
 */

const GONE = Symbol('deleted')

/** A map of rows by id (see module comment). Mutating methods are for the draft that owns it. */
export class LayeredMap<V> implements ReadonlyMap<string, V> {
  private constructor(
    private readonly base: ReadonlyMap<string, V>,
    private readonly layer: Map<string, V | typeof GONE>,
    private count: number,
  ) {}

  /** A map of the entries of `map` (which must not change afterwards). */
  static of<V>(map: ReadonlyMap<string, V> = new Map()): LayeredMap<V> {
    return new LayeredMap(map, new Map(), map.size)
  }

  /** Whether the layer has outgrown its base's share (see module comment). */
  private get outgrown(): boolean {
    return this.layer.size > 32 + Math.sqrt(2 * this.base.size)
  }

  /** A copy to change, sharing the base (see module comment). */
  fork(): LayeredMap<V> {
    if (this.outgrown) return new LayeredMap(new Map(this), new Map(), this.count)
    return new LayeredMap(this.base, new Map(this.layer), this.count)
  }

  /**
   * This map as it will be kept (a draft's map when its batch is sealed): itself, or, when its layer
   * has outgrown the base, the same entries on a new base, so that rows it replaced or deleted are
   * no longer held by the old one.
   */
  settled(): LayeredMap<V> {
    return this.outgrown ? new LayeredMap(new Map(this), new Map(), this.count) : this
  }

  get size(): number {
    return this.count
  }

  get(key: string): V | undefined {
    const own = this.layer.get(key)
    if (own !== undefined) return own === GONE ? undefined : own
    return this.base.get(key)
  }

  has(key: string): boolean {
    const own = this.layer.get(key)
    if (own !== undefined) return own !== GONE
    return this.base.has(key)
  }

  set(key: string, value: V): this {
    if (!this.has(key)) this.count++
    this.layer.set(key, value)
    return this
  }

  delete(key: string): boolean {
    if (!this.has(key)) return false
    this.count--
    if (this.base.has(key)) this.layer.set(key, GONE)
    else this.layer.delete(key)
    return true
  }

  *entries(): MapIterator<[string, V]> {
    const layer = this.layer
    for (const entry of this.base) {
      const own = layer.get(entry[0])
      if (own === undefined) yield entry
      else if (own !== GONE) yield [entry[0], own]
    }
    for (const [key, own] of layer) if (own !== GONE && !this.base.has(key)) yield [key, own]
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.entries()) yield key
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries()
  }

  forEach(fn: (value: V, key: string, map: ReadonlyMap<string, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) fn.call(thisArg, value, key, this)
  }
}
