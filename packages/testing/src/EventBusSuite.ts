/**
 * The contract of the EventBus port; every event bus runs it with one line.
 * A bus may deliver a signal a moment after `publish` returns (one across
 * processes sends it through its database), so the suite waits for wake-ups,
 * a few seconds at most, and gives a wake-up that should not come a moment
 * to come before it says that none did.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { EventBus, Ids } from "@hosting/core"
import { Effect, Exit, Fiber, type Layer, Option, Scope } from "effect"
import { uniqueName } from "./StorageSuite.js"

const account = () => Ids.AccountId.make(uniqueName("acc"))

/** Waits for the subscription's next wake-up; fails the test if none comes within a few seconds. */
const woken = (wakeups: EventBus.Wakeups) =>
  wakeups.take.pipe(
    Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("no wake-up came within 5 seconds") }),
    Effect.orDie
  )

/** Whether the subscription stays asleep for a moment. */
const asleep = (wakeups: EventBus.Wakeups) => Effect.map(Effect.timeoutOption(wakeups.take, "100 millis"), Option.isNone)

/** Runs the event bus contract against a layer providing the port. */
export const run = <E>(name: string, layer: Layer.Layer<EventBus.EventBus, E>) => {
  describe(`event bus contract: ${name}`, () => {
    withLayer(layer, { timeout: 30_000, excludeTestServices: true })((it) => {
      it.scoped("a publication wakes every subscriber of every account it names", () =>
        Effect.gen(function*() {
          const bus = yield* EventBus.EventBus
          const [a, b] = [account(), account()]
          const subscriptions = [yield* bus.subscribe(a), yield* bus.subscribe(a), yield* bus.subscribe(b)]
          yield* bus.publish([a, b])
          yield* Effect.forEach(subscriptions, woken, { discard: true })
        }))

      it.scoped("a subscriber already waiting in take is woken by the next publication", () =>
        Effect.gen(function*() {
          const bus = yield* EventBus.EventBus
          const a = account()
          const wakeups = yield* bus.subscribe(a)
          const waiting = yield* Effect.fork(woken(wakeups))
          yield* Effect.sleep("20 millis")
          yield* bus.publish([a])
          yield* Fiber.join(waiting)
        }))

      it.scoped("a publication wakes no subscriber of an account it does not name", () =>
        Effect.gen(function*() {
          const bus = yield* EventBus.EventBus
          const [named, other] = [account(), account()]
          const namedWakeups = yield* bus.subscribe(named)
          const otherWakeups = yield* bus.subscribe(other)
          yield* bus.publish([named])
          yield* woken(namedWakeups)
          expect(yield* asleep(otherWakeups)).toBe(true)
        }))

      it.scoped("signals that pile up before a take collapse into one: one take returns, the next waits", () =>
        Effect.gen(function*() {
          const bus = yield* EventBus.EventBus
          const [a, marker] = [account(), account()]
          const wakeups = yield* bus.subscribe(a)
          const markerWakeups = yield* bus.subscribe(marker)
          yield* bus.publish([a])
          yield* bus.publish([a, a])
          yield* bus.publish([a])
          // Signals arrive in the order they were published: once the marker's has come, so have the others.
          yield* bus.publish([marker])
          yield* woken(markerWakeups)
          yield* woken(wakeups)
          expect(yield* asleep(wakeups)).toBe(true)
        }))

      it.scoped("a subscription lasts as long as its scope: subscribers counts it until the scope closes", () =>
        Effect.gen(function*() {
          const bus = yield* EventBus.EventBus
          const a = account()
          const before = yield* bus.subscribers
          const shortLived = yield* Scope.make()
          yield* Scope.extend(bus.subscribe(a), shortLived)
          const staying = yield* bus.subscribe(a)
          expect(yield* bus.subscribers).toBe(before + 2)
          yield* Scope.close(shortLived, Exit.void)
          expect(yield* bus.subscribers).toBe(before + 1)
          // The bus goes on for the subscription still open.
          yield* bus.publish([a])
          yield* woken(staying)
        }))

      it.scoped("publishing to no account, or to one nobody follows, is harmless", () =>
        Effect.gen(function*() {
          const bus = yield* EventBus.EventBus
          const a = account()
          const wakeups = yield* bus.subscribe(a)
          yield* bus.publish([])
          yield* bus.publish([account()])
          yield* bus.publish([a])
          yield* woken(wakeups)
        }))
    })
  })
}
