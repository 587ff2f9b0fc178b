import { Effect, Fiber, FiberId, type Scope } from "effect"
import { InFlightSet } from "../runtime/InFlight.js"

/**
 * Daemon fibers kept for the life of a scope, which interrupts those still
 * running when it closes (and waits for them): what effect's `FiberSet`
 * does with `run`, on an `InFlightSet` rather than a `Set`, so that the
 * fibers that come and go are not promoted with all they hold
 * (runtime/InFlight.ts).
 */
export interface Daemons {
  /** Forks `effect` as a daemon kept here until it ends; once the scope has closed, the fiber is interrupted at once. */
  readonly run: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<Fiber.RuntimeFiber<A, E>>
}

export const make: Effect.Effect<Daemons, never, Scope.Scope> = Effect.gen(function*() {
  const fibers = new InFlightSet<Fiber.RuntimeFiber<unknown, unknown>>()
  let open = true
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      open = false
      const running = [...fibers]
      fibers.clear()
      return Fiber.interruptAll(running)
    })
  )
  const keep = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) => {
    if (!open) {
      fiber.unsafeInterruptAsFork(FiberId.none)
      return fiber
    }
    fibers.add(fiber)
    fiber.addObserver(() => fibers.delete(fiber))
    return fiber
  }
  return { run: (effect) => Effect.map(Effect.forkDaemon(effect), keep) }
})
