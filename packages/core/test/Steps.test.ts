/**
 * Steps.catchFailure answers what Effect.catchAll answers, for every kind of
 * end an effect can have, and a success passes it with fewer steps.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FiberId, FiberRef } from "effect"
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
