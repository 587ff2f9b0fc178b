/**
 * `Outcome` (internal/outcome.ts), what the reply runner and the group
 * commit wait on instead of a `Deferred`: settled once, it ends every wait
 * as it was settled, those before and those after; a wait that is
 * interrupted leaves it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { Outcome } from "../src/internal/outcome.js"

describe("Outcome", () => {
  it.effect("ends the waits before and after it is settled, with the first settlement only", () =>
    Effect.gen(function*() {
      const outcome = new Outcome<number, string>()
      const early = yield* Effect.fork(outcome.await)
      yield* Effect.yieldNow()
      expect(outcome.isDone).toBe(false)
      outcome.succeed(1)
      outcome.done(Exit.fail("later"))
      expect(yield* Fiber.join(early)).toBe(1)
      expect(yield* outcome.await).toBe(1)
      const failed = new Outcome<number, string>()
      failed.done(Exit.fail("no"))
      expect(yield* Effect.flip(failed.await)).toBe("no")
    }))

  it.effect("a wait that is interrupted stops waiting; the others still end", () =>
    Effect.gen(function*() {
      const outcome = new Outcome<string>()
      const left = yield* Effect.fork(outcome.await)
      const stays = yield* Effect.fork(outcome.await)
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(left)
      outcome.succeed("done")
      expect(yield* Fiber.join(stays)).toBe("done")
      expect(Exit.isInterrupted(yield* Fiber.await(left))).toBe(true)
    }))
})
