/**
 * A context with a service more, made without copying the one it extends.
 *
 * `Context.add` copies every entry of the context into a new map. A fiber
 * that serves a request holds the app's sixty-odd services, so a copy for
 * one more (a transaction's connection, once a transaction) cost more than
 * the statements it served (docs/performance.md, "A transaction's context
 * read through"). `Contexts.add` gives a context whose map holds its own
 * entries and reads through to the extended context's map for the rest.
 * Anything that reads the whole map (a copy, as `Context.add` makes over
 * it; an iteration) or deletes from it first copies the extended entries
 * in, once: from then on it is a plain map with the same entries. Its size
 * is counted without a copy.
 * The extended context is never changed.
 */
import { Context } from "effect"

/** A map with entries of its own over a map it reads through to until it is read whole. */
class ReadThrough<K, V> extends Map<K, V> {
  /** The extended entries, until they are copied in. */
  private under: ReadonlyMap<K, V> | undefined

  constructor(under: ReadonlyMap<K, V>) {
    super()
    this.under = under
  }

  override get(key: K): V | undefined {
    const own = super.get(key)
    if (own !== undefined || this.under === undefined || super.has(key)) return own
    return this.under.get(key)
  }

  override has(key: K): boolean {
    return super.has(key) || (this.under !== undefined && this.under.has(key))
  }

  /** Copies the extended entries that this map did not replace, once. */
  private whole(): this {
    const under = this.under
    if (under !== undefined) {
      this.under = undefined
      for (const [key, value] of under) if (!super.has(key)) super.set(key, value)
    }
    return this
  }

  /** Counted without a copy: Effect reads a context's size each time a fiber's context is set (its hash). */
  override get size(): number {
    const under = this.under
    if (under === undefined) return super.size
    let added = 0
    for (const key of super.keys()) if (!under.has(key)) added++
    return under.size + added
  }

  override delete(key: K): boolean {
    this.whole()
    return super.delete(key)
  }

  override clear(): void {
    this.under = undefined
    super.clear()
  }

  override entries(): MapIterator<[K, V]> {
    this.whole()
    return super.entries()
  }

  override keys(): MapIterator<K> {
    this.whole()
    return super.keys()
  }

  override values(): MapIterator<V> {
    this.whole()
    return super.values()
  }

  override forEach(callback: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown): void {
    this.whole()
    super.forEach(callback, thisArg)
  }

  override [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries()
  }
}

/** `context` with `service` under `tag`, as `Context.add` gives it, without a copy of `context`. */
export const add = <Services, I, S>(
  context: Context.Context<Services>,
  tag: Context.Tag<I, S>,
  service: S
): Context.Context<Services | I> =>
  Context.unsafeMake<Services | I>(new ReadThrough<string, unknown>(context.unsafeMap).set(tag.key, service))
