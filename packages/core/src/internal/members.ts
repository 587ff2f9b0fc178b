import { Context, Effect, Scope } from "effect"
import { InFlightMap } from "../runtime/InFlight.js"
import * as Steps from "../runtime/Steps.js"

/**
 * Members kept per key for the life of a scope (a bus's subscribers per
 * account or conversation), and how many there are in all.
 */
export const make = <K, V>() => {
  // Keys come and go (a conversation's followers): kept so as not to promote their members (runtime/InFlight.ts).
  const byKey = new InFlightMap<K, Set<V>>()
  let count = 0
  return {
    /** The members of a key now. */
    of: (key: K): Iterable<V> => byKey.get(key) ?? [],
    /**
     * Adds a member to a key until the scope closes. The removal is added to
     * the scope directly: it needs nothing of the adding fiber, whose context
     * a finalizer added with `Effect.addFinalizer` would patch in and out.
     * Where the fiber is uninterruptible already, the member is added in the
     * step that reads the scope and its removal in the next, with no region
     * of its own to make the two one (runtime/Steps.ts).
     */
    add: (key: K, member: V): Effect.Effect<void, never, Scope.Scope> =>
      Effect.withFiberRuntime((fiber, status) => {
        const scope = Context.unsafeGet(fiber.currentContext, Scope.Scope)
        const adding = () => {
          let set = byKey.get(key)
          if (set === undefined) byKey.set(key, (set = new Set()))
          set.add(member)
          count++
          // `addFinalizerExit`: the removal as it is, where `addFinalizer` wraps it in a step more, which a server
          // closing the scope with no fiber (`@hosting/http-node`) would not recognise as a plain `Effect.sync`.
          return Scope.addFinalizerExit(scope, () =>
            Effect.sync(() => {
              const members = byKey.get(key)
              members?.delete(member)
              if (members?.size === 0) byKey.delete(key)
              count--
            }))
        }
        return Steps.interruptibleAt(status) ? Effect.uninterruptible(Effect.suspend(adding)) : adding()
      }),
    /** How many members all keys have. */
    count: Effect.sync(() => count)
  }
}
