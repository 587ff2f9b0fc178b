/**
 * The services of one request: the entries the request adds (its scope,
 * itself, what its route and middleware add) over the server's, which every
 * request shares and nothing changes.
 *
 * A request's fiber needs its context as a `Map` (Effect's `Context` is one
 * map). Copying the server's sixty-odd services into a new map for every
 * request cost about 5 µs and 20 KB of garbage a request (docs/performance.md,
 * "One map per request"); this map reads through to the server's instead.
 * Lookups (`get`, `has`) see the request's entries first, then the server's.
 * Anything that reads the whole map (a copy, as `Context.add` makes; an
 * iteration) or deletes from it first copies the server's entries in, once:
 * from then on it is a plain map with the same entries. Its size is counted
 * without a copy.
 */
export class RequestServices<K, V> extends Map<K, V> {
  /** The server's entries, until they are copied in. */
  private shared: ReadonlyMap<K, V> | undefined

  constructor(shared: ReadonlyMap<K, V>) {
    super()
    this.shared = shared
  }

  override get(key: K): V | undefined {
    const own = super.get(key)
    if (own !== undefined || this.shared === undefined || super.has(key)) return own
    return this.shared.get(key)
  }

  override has(key: K): boolean {
    return super.has(key) || (this.shared !== undefined && this.shared.has(key))
  }

  /** Copies the server's entries that the request did not replace into this map, once. */
  private flat(): this {
    const shared = this.shared
    if (shared !== undefined) {
      this.shared = undefined
      for (const [key, value] of shared) if (!super.has(key)) super.set(key, value)
    }
    return this
  }

  /**
   * Counted without a copy: Effect reads a context's size (its hash) each
   * time a fiber's context is set, which a transaction does twice.
   */
  override get size(): number {
    const shared = this.shared
    if (shared === undefined) return super.size
    let added = 0
    for (const key of super.keys()) if (!shared.has(key)) added++
    return shared.size + added
  }

  override delete(key: K): boolean {
    return this.flat().deleteOwn(key)
  }

  private deleteOwn(key: K): boolean {
    return super.delete(key)
  }

  override clear(): void {
    this.shared = undefined
    super.clear()
  }

  override entries(): MapIterator<[K, V]> {
    this.flat()
    return super.entries()
  }

  override keys(): MapIterator<K> {
    this.flat()
    return super.keys()
  }

  override values(): MapIterator<V> {
    this.flat()
    return super.values()
  }

  override forEach(callback: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown): void {
    this.flat()
    super.forEach(callback, thisArg)
  }

  override [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries()
  }
}
