/**
 * Steps.catchFailure answers what Effect.catchAll answers, for every kind of
 * end an effect can have, and a success passes it with fewer steps.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Clock, DateTime, Deferred, Effect, Exit, Fiber, FiberId, FiberRef, RuntimeFlags, TestClock } from "effect"
import { Steps } from "../src/index.js"

const recover = (error: string) => Effect.succeed(`recovered from ${error}`)

/** Every kind of end: a success, a failure, a defect, an interruption, and causes that mix them. */
const ends: ReadonlyArray<readonly [string, Effect.Effect<string, string>]> = [
  ["a success", Effect.succeed("fine")],
  ["a failure", Effect.fail("boom")],
  ["a defect", Effect.die("broken")],
  ["an interruption", Effect.interrupt],
  ["two failures in parallel", Effect.failCause(Cause.parallel(Cause.fail("first"), Cause.fail("second")))],
  ["a failure beside a defect", Effect.failCause(Cause.parallel(Cause.fail("boom"), Cause.die("broken")))],
  ["a failure beside an interruption", Effect.failCause(Cause.sequential(Cause.interrupt(FiberId.none), Cause.fail("boom")))]
]

/** How many steps the fiber's run loop takes for `effect` (its op count, with yielding out of the way). */
const stepsOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.withFiberRuntime<number, E>((fiber) => {
    const before = fiber.currentOpCount
    return Effect.flatMap(effect, () => Effect.sync(() => fiber.currentOpCount - before))
  }).pipe(Effect.locally(FiberRef.currentMaxOpsBeforeYield, 1_000_000))

describe("Steps.catchFailure", () => {
  for (const [name, effect] of ends) {
    it.effect(`ends as Effect.catchAll does after ${name}`, () =>
      Effect.gen(function*() {
        const ours = yield* Effect.exit(Steps.catchFailure(effect, recover))
        const effects = yield* Effect.exit(Effect.catchAll(effect, recover))
        expect(Exit.isSuccess(ours)).toBe(Exit.isSuccess(effects))
        if (Exit.isSuccess(ours) && Exit.isSuccess(effects)) expect(ours.value).toBe(effects.value)
        if (Exit.isFailure(ours) && Exit.isFailure(effects)) {
          expect(Cause.failures(ours.cause)).toEqual(Cause.failures(effects.cause))
          expect(Cause.defects(ours.cause)).toEqual(Cause.defects(effects.cause))
          expect(Cause.isInterrupted(ours.cause)).toBe(Cause.isInterrupted(effects.cause))
        }
      }))
  }

  it.effect("is dual: as a pipe step it catches the same", () =>
    Effect.gen(function*() {
      expect(yield* Effect.fail("boom").pipe(Steps.catchFailure(recover))).toBe("recovered from boom")
    }))

  it.effect("a success passes it in fewer steps than it passes Effect.catchAll", () =>
    Effect.gen(function*() {
      const work = Effect.map(Effect.succeed(1), (n) => n + 1)
      const ours = yield* stepsOf(Steps.catchFailure(work, () => Effect.succeed(0)))
      const effects = yield* stepsOf(Effect.catchAll(work, () => Effect.succeed(0)))
      expect(ours).toBeLessThan(effects)
    }))
})

/** Runs `effect` in a fiber that is uninterruptible where it starts (as a group commit's or a reply's is). */
const nested = <A, E>(effect: Effect.Effect<A, E>) => Effect.uninterruptible(effect)

/** What an exit says, in a form two exits can be compared by. */
const summary = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isSuccess(exit)
    ? { success: exit.value }
    : {
      failures: Cause.failures(exit.cause).pipe((c) => [...c]),
      defects: Cause.defects(exit.cause).pipe((c) => [...c]),
      interrupted: Cause.isInterrupted(exit.cause)
    }

describe("Steps.ensuring", () => {
  for (const [name, effect] of ends) {
    for (const [where, around] of [["where the fiber is interruptible", <A, E>(e: Effect.Effect<A, E>) => e], ["inside an uninterruptible region", nested]] as const) {
      it.effect(`ends as Effect.ensuring does after ${name}, ${where}, and runs its finalizer once`, () =>
        Effect.gen(function*() {
          let ours = 0
          let effects = 0
          const oursExit = yield* Effect.exit(around(Steps.ensuring(effect, Effect.sync(() => ours++))))
          const effectsExit = yield* Effect.exit(around(Effect.ensuring(effect, Effect.sync(() => effects++))))
          expect(summary(oursExit)).toEqual(summary(effectsExit))
          expect([ours, effects]).toEqual([1, 1])
        }))
    }
  }

  it.effect("a finalizer that dies adds its defect after the effect's failure, as Effect.ensuring does", () =>
    Effect.gen(function*() {
      const ours = yield* Effect.exit(nested(Steps.ensuring(Effect.fail("boom"), Effect.die("finalizer broke"))))
      const effects = yield* Effect.exit(nested(Effect.ensuring(Effect.fail("boom"), Effect.die("finalizer broke"))))
      expect(summary(ours)).toEqual(summary(effects))
      expect(summary(ours)).toEqual({ failures: ["boom"], defects: ["finalizer broke"], interrupted: false })
    }))

  it.effect("runs its finalizer when the fiber is interrupted while it waits, interruptible or in a region made interruptible inside", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const waiting = yield* Deferred.make<void>()
      const outside = yield* Effect.fork(Steps.ensuring(Effect.zipRight(Deferred.succeed(waiting, undefined), Effect.never), Effect.sync(() => ran.push("outside"))))
      yield* Deferred.await(waiting)
      yield* Fiber.interrupt(outside)
      const inside = yield* Deferred.make<void>()
      const region = yield* Effect.fork(
        Effect.uninterruptibleMask((restore) =>
          Steps.ensuring(restore(Effect.zipRight(Deferred.succeed(inside, undefined), Effect.never)), Effect.sync(() => ran.push("inside"))))
      )
      yield* Deferred.await(inside)
      yield* Fiber.interrupt(region)
      expect(ran).toEqual(["outside", "inside"])
    }))

  it.effect("inside an uninterruptible region it takes fewer steps than Effect.ensuring", () =>
    Effect.gen(function*() {
      const work = Effect.map(Effect.succeed(1), (n) => n + 1)
      const ours = yield* stepsOf(nested(Steps.ensuring(work, Effect.void)))
      const effects = yield* stepsOf(nested(Effect.ensuring(work, Effect.void)))
      expect(ours).toBeLessThan(effects)
    }))
})

describe("Steps.onExitInRegion", () => {
  for (const [name, effect] of ends) {
    it.effect(`inside an uninterruptible region, ends as Effect.onExit does after ${name}, its cleanup given the same exit once`, () =>
      Effect.gen(function*() {
        const ours: Array<Exit.Exit<string, string>> = []
        const effects: Array<Exit.Exit<string, string>> = []
        const oursExit = yield* Effect.exit(nested(Steps.onExitInRegion(effect, (exit) => Effect.sync(() => ours.push(exit)))))
        const effectsExit = yield* Effect.exit(nested(Effect.onExit(effect, (exit) => Effect.sync(() => effects.push(exit)))))
        expect(summary(oursExit)).toEqual(summary(effectsExit))
        expect(ours.map(summary)).toEqual(effects.map(summary))
        expect(ours).toHaveLength(1)
      }))
  }

  it.effect("a cleanup that dies adds its defect after the effect's failure, as Effect.onExit does", () =>
    Effect.gen(function*() {
      const ours = yield* Effect.exit(nested(Steps.onExitInRegion(Effect.fail("boom"), () => Effect.die("cleanup broke"))))
      const effects = yield* Effect.exit(nested(Effect.onExit(Effect.fail("boom"), () => Effect.die("cleanup broke"))))
      expect(summary(ours)).toEqual(summary(effects))
      expect(summary(ours)).toEqual({ failures: ["boom"], defects: ["cleanup broke"], interrupted: false })
    }))

  it.effect("inside a mask, an interruption of the restored part reaches the cleanup as an interruption", () =>
    Effect.gen(function*() {
      const seen: Array<boolean> = []
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(Effect.uninterruptibleMask((restore) =>
        Steps.onExitInRegion(
          restore(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)),
          (exit) => Effect.sync(() => seen.push(Exit.isInterrupted(exit)))
        )
      ))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      expect(seen).toEqual([true])
    }))

  it.effect("inside an uninterruptible region it takes fewer steps than Effect.onExit", () =>
    Effect.gen(function*() {
      const work = Effect.map(Effect.succeed(1), (n) => n + 1)
      const ours = yield* stepsOf(nested(Steps.onExitInRegion(work, () => Effect.void)))
      const effects = yield* stepsOf(nested(Effect.onExit(work, () => Effect.void)))
      expect(ours).toBeLessThan(effects)
    }))
})

describe("Steps.uninterruptible and Steps.uninterruptibleMask", () => {
  it.effect("an interruption that arrives while the region waits takes effect only once it ends, as with Effect's", () =>
    Effect.gen(function*() {
      for (const region of [Steps.uninterruptible, Effect.uninterruptible]) {
        const started = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        let ended = false
        const fiber = yield* Effect.fork(region(Effect.zipRight(
          Deferred.succeed(started, undefined),
          Effect.zipRight(Deferred.await(release), Effect.sync(() => (ended = true)))
        )))
        yield* Deferred.await(started)
        const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
        yield* Deferred.succeed(release, undefined)
        const exit = yield* Fiber.join(interrupting)
        expect(ended).toBe(true)
        expect(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)).toBe(true)
      }
    }))

  it.effect("a mask's restore gives back interruption where the fiber had it, and keeps the region where it had not", () =>
    Effect.gen(function*() {
      const interruptible = Effect.withFiberRuntime<boolean>((_, status) => Effect.succeed(RuntimeFlags.interruptible(status.runtimeFlags)))
      const probe = Steps.uninterruptibleMask((restore) => Effect.all([interruptible, restore(interruptible)]))
      expect(yield* probe).toEqual([false, true])
      expect(yield* nested(probe)).toEqual([false, false])
      const effects = Effect.uninterruptibleMask((restore) => Effect.all([interruptible, restore(interruptible)]))
      expect(yield* effects).toEqual(yield* probe)
      expect(yield* nested(effects)).toEqual(yield* nested(probe))
    }))

  it.effect("inside an uninterruptible region they take fewer steps than Effect's", () =>
    Effect.gen(function*() {
      const work = Effect.map(Effect.succeed(1), (n) => n + 1)
      expect(yield* stepsOf(nested(Steps.uninterruptible(work)))).toBeLessThan(yield* stepsOf(nested(Effect.uninterruptible(work))))
      expect(yield* stepsOf(nested(Steps.uninterruptibleMask((restore) => restore(work)))))
        .toBeLessThan(yield* stepsOf(nested(Effect.uninterruptibleMask((restore) => restore(work)))))
    }))
})

describe("Steps.now and Steps.withClock", () => {
  it.effect("read the clock Effect's own reads give: the test clock, and one set with Effect.withClock", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("90 minutes")
      expect(DateTime.toEpochMillis(yield* Steps.now)).toBe(DateTime.toEpochMillis(yield* DateTime.now))
      expect(DateTime.toEpochMillis(yield* Steps.withNow((now) => Effect.succeed(now)))).toBe(90 * 60_000)
      const fixed: Clock.Clock = {
        [Clock.ClockTypeId]: Clock.ClockTypeId,
        unsafeCurrentTimeMillis: () => 1_234,
        currentTimeMillis: Effect.succeed(1_234),
        unsafeCurrentTimeNanos: () => 1_234_000_000n,
        currentTimeNanos: Effect.succeed(1_234_000_000n),
        sleep: () => Effect.void
      }
      const read = Steps.withClock((clock) => Effect.succeed([clock.unsafeCurrentTimeMillis(), clock.unsafeCurrentTimeNanos()] as const))
      expect(yield* Effect.withClock(read, fixed)).toEqual([1_234, 1_234_000_000n])
      expect(DateTime.toEpochMillis(yield* Effect.withClock(Steps.now, fixed))).toBe(1_234)
    }))

  it.effect("Steps.now takes fewer steps than DateTime.now", () =>
    Effect.gen(function*() {
      expect(yield* stepsOf(Steps.now)).toBeLessThan(yield* stepsOf(DateTime.now))
    }))
})
