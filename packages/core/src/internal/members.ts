import { Effect, type Scope } from "effect"

/**
 * Members kept per key for the life of a scope (a bus's subscribers per
 * account or conversation), and how many there are in all.
 */
export const make = <K, V>() => {
  const byKey = new Map<K, Set<V>>()
  let count = 0
  return {
    /** The members of a key now. */
    of: (key: K): Iterable<V> => byKey.get(key) ?? [],
    /** Adds a member to a key until the scope closes. */
    add: (key: K, member: V): Effect.Effect<void, never, Scope.Scope> =>
      Effect.acquireRelease(
        Effect.sync(() => {
          let set = byKey.get(key)
          if (set === undefined) byKey.set(key, (set = new Set()))
          set.add(member)
          count++
        }),
        () =>
          Effect.sync(() => {
            const set = byKey.get(key)
            set?.delete(member)
            if (set?.size === 0) byKey.delete(key)
            count--
          })
      ),
    /** How many members all keys have. */
    count: Effect.sync(() => count)
  }
}
