/**
 * Bounded maps of what was seen lately (caches of principals, of owners of
 * conversations, of prepared statements, of answers, rate buckets): at most
 * `max` entries, the one set longest ago dropped first when a new key comes.
 * Setting a key again makes it the newest, so a cache that sets what it
 * reads again keeps the least recently used order.
 *
 * A native `Map` keeps its order, but deleting its first entry leaves a hole
 * that stays until V8 rebuilds the table, and `keys().next()` walks over
 * every hole before the first live entry: with 10,000 entries an eviction
 * took about 9 µs, with 100,000 about 50 µs, on every new key once the map
 * was full (docs/decisions.md, "A bounded map that drops its oldest entry
 * in constant time").
 * Here the entries live in two generations: new keys go to the newer; when
 * the two hold `max`, the oldest entry of the older goes, found by an
 * iterator that lives as long as the older generation does, so that each
 * hole is passed once; when the older is empty, the newer becomes it.
 */

/** A map of at most `max` entries, the oldest set dropped first. */
export class RecentMap<K, V> implements Iterable<[K, V]> {
  private newer = new Map<K, V>()
  private older = new Map<K, V>()
  /** The older generation's keys, oldest first, from where the last drop left off. */
  private oldest: Iterator<K> | undefined
  private readonly max: number

  constructor(max: number) {
    this.max = Math.max(1, Math.floor(max))
  }

  get size(): number {
    return this.newer.size + this.older.size
  }

  get(key: K): V | undefined {
    const value = this.newer.get(key)
    return value !== undefined || this.newer.has(key) ? value : this.older.get(key)
  }

  has(key: K): boolean {
    return this.newer.has(key) || this.older.has(key)
  }

  /** Sets `key` as the newest entry, dropping the oldest when the map is full and the key is new. */
  set(key: K, value: V): this {
    if (!this.newer.has(key) && !this.older.delete(key) && this.size >= this.max) this.dropOldest()
    else this.newer.delete(key)
    this.newer.set(key, value)
    return this
  }

  delete(key: K): boolean {
    return this.newer.delete(key) || this.older.delete(key)
  }

  clear(): void {
    this.newer.clear()
    this.older.clear()
    this.oldest = undefined
  }

  /** The entries, oldest first (a key deleted meanwhile is not visited, as with a `Map`). */
  *[Symbol.iterator](): IterableIterator<[K, V]> {
    yield* this.older
    yield* this.newer
  }

  private dropOldest(): void {
    if (this.older.size === 0) {
      this.older = this.newer
      this.newer = new Map()
      this.oldest = this.older.keys()
    }
    // Live entries are all past the iterator: it passed only entries it dropped or that were set again since.
    const next = this.oldest!.next()
    if (next.done !== true) this.older.delete(next.value)
  }
}

/** A map of at most `max` entries, the oldest set dropped first (see `RecentMap`). */
export const make = <K, V>(max: number): RecentMap<K, V> => new RecentMap(max)
