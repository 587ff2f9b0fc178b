/**
 * Sets and maps for what is in flight: long-lived registries whose entries
 * come and go (running replies, open streams, root fibers), kept without
 * moving each entry to V8's old generation.
 *
 * V8 keeps a `Set`'s or a `Map`'s entries in a table. A table that lived
 * through two young collections sits in the old generation, and every table
 * V8 makes for it later (at each rehash, which comes every few additions
 * when entries come and go) is made there too. The table a rehash replaces
 * keeps its entries: dead, but in the old generation, it holds them for the
 * young collector until the next full collection. So every entry that was
 * in the registry at a rehash, and all that it refers to, is copied once
 * and then promoted; a running reply so takes its fiber, its context and its
 * text along (docs/performance.md, "Registries that promote what they
 * hold"). These make their table anew every `renewEvery` deletions: a new
 * table is young, and stays young while entries come and go.
 *
 * Iteration walks the table of the moment it starts; an entry deleted after
 * a renewal that came meanwhile is still visited.
 */
import { GlobalValue } from "effect"

/** Deletions between two renewals of the table; also at least a quarter of the size, so that copies stay cheap. */
const renewEvery = 64

/** A registry over a native `Set` or `Map` (its table), which it makes anew, with the same entries, every so many deletions. */
class Renewed<K, Table extends Set<K> | Map<K, unknown>> {
  protected table: Table
  private deletions = 0

  constructor(private readonly copy: (from?: Table) => Table) {
    this.table = copy()
  }

  get size(): number {
    return this.table.size
  }

  has(key: K): boolean {
    return this.table.has(key)
  }

  delete(key: K): boolean {
    const table = this.table
    if (!table.delete(key)) return false
    if (++this.deletions >= renewEvery && this.deletions >= table.size >> 2) {
      this.deletions = 0
      this.table = this.copy(table)
    }
    return true
  }

  clear(): void {
    this.deletions = 0
    this.table = this.copy()
  }
}

/** A `Set` for entries that come and go while it lives on. */
export class InFlightSet<T> extends Renewed<T, Set<T>> implements Iterable<T> {
  constructor() {
    super((from) => new Set(from))
  }

  add(value: T): this {
    this.table.add(value)
    return this
  }

  values(): IterableIterator<T> {
    return this.table.values()
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this.table.values()
  }
}

/** A `Map` for entries that come and go while it lives on. */
export class InFlightMap<K, V> extends Renewed<K, Map<K, V>> implements Iterable<[K, V]> {
  constructor() {
    super((from) => new Map(from))
  }

  get(key: K): V | undefined {
    return this.table.get(key)
  }

  set(key: K, value: V): this {
    this.table.set(key, value)
    return this
  }

  keys(): IterableIterator<K> {
    return this.table.keys()
  }

  values(): IterableIterator<V> {
    return this.table.values()
  }

  entries(): IterableIterator<[K, V]> {
    return this.table.entries()
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.table.entries()
  }
}

/** Effect's global fiber scope as effect 3 builds it: every root or daemon fiber is added to `roots` and deleted when it ends. */
interface GlobalScope {
  roots: { add(fiber: unknown): unknown; delete(fiber: unknown): unknown; [Symbol.iterator](): Iterator<unknown> }
}

/** Where effect keeps its global fiber scope (a global value, made when its fiber runtime loads). */
const globalScopeId = Symbol.for("effect/FiberScope/Global")

/** Effect's global fiber scope; `undefined` if effect has not made one (then nothing is stored in its place). */
const globalScope = (): Partial<GlobalScope> | undefined => {
  try {
    return GlobalValue.globalValue<Partial<GlobalScope>>(globalScopeId, () => {
      throw new Error("no global fiber scope")
    })
  } catch {
    return undefined
  }
}

/**
 * Keeps effect's register of root fibers (every fiber run by a runtime, and
 * every daemon: one per request and per reply) in an `InFlightSet`, for
 * the whole process; `Fiber.roots` lists the same fibers as before. Does
 * nothing when done already, or when the effect installed keeps its roots
 * otherwise.
 */
export const renewFiberRoots = (): void => {
  const scope = globalScope()
  const roots = scope?.roots
  if (scope === undefined || !(roots instanceof Set)) return
  const renewed = new InFlightSet<unknown>()
  for (const fiber of roots) renewed.add(fiber)
  scope.roots = renewed
}
