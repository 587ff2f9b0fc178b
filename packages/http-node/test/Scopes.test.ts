/**
 * Scopes made outside a fiber (`internal/scopes.ts`) against scopes made by
 * `Scope.make`: the same finalizers in the same order, the same forked
 * children and fibers closed with them. The maker must exist on the Effect
 * this workspace uses; a new Effect whose scopes differ fails here. A
 * scope whose finalizers all give an `Effect.sync` closes on the calling stack
 * (`closeNow`) as `Scope.close` closes it; any other finalizer leaves it to
 * `Scope.close`, untouched.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, ExecutionStrategy, Exit, Fiber, Scope } from "effect"
import { closeNow, maker } from "../src/internal/scopes.js"

/** What closing a scope did, step by step, for one way of making it. */
const scenario = (make: Effect.Effect<Scope.CloseableScope>) =>
  Effect.gen(function*() {
    const steps: Array<string> = []
    const scope = yield* make
    yield* Scope.addFinalizer(scope, Effect.sync(() => steps.push("first added")))
    yield* Scope.addFinalizerExit(scope, (exit) => Effect.sync(() => steps.push(`second added, ${exit._tag}`)))
    const child = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    yield* Scope.addFinalizer(child, Effect.sync(() => steps.push("child")))
    const started = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkIn(
      Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(
        Effect.onInterrupt(() => Effect.sync(() => steps.push("fiber interrupted")))
      ),
      scope
    )
    yield* Deferred.await(started)
    yield* Effect.acquireRelease(Effect.void, () => Effect.sync(() => steps.push("resource released"))).pipe(Scope.extend(scope))
    yield* Scope.close(scope, Exit.fail("bye"))
    steps.push(`fiber ${(yield* Fiber.await(fiber))._tag}`)
    yield* Scope.addFinalizer(scope, Effect.sync(() => steps.push("added after close")))
    yield* Scope.close(scope, Exit.void)
    return steps
  })

describe("scopes made outside a fiber", () => {
  it.effect("this Effect's scopes are ones the maker knows: a request's context is made before its fiber", () =>
    Effect.gen(function*() {
      expect(yield* maker).toBeTypeOf("function")
    }))

  it.effect("a made scope finalizes as one of Scope.make: in reverse order, children, forked fibers and resources, once", () =>
    Effect.gen(function*() {
      const make = (yield* maker)!
      const reference = yield* scenario(Scope.make())
      const made = yield* scenario(Effect.sync(make))
      expect(made).toEqual(reference)
      expect(reference).toEqual([
        "resource released",
        "fiber interrupted",
        "child",
        "second added, Failure",
        "first added",
        "fiber Failure",
        "added after close"
      ])
    }))

  it.effect("each made scope is its own", () =>
    Effect.gen(function*() {
      const make = (yield* maker)!
      const [a, b] = [make(), make()]
      let closed = 0
      yield* Scope.addFinalizer(a, Effect.sync(() => closed++))
      yield* Scope.close(b, Exit.void)
      expect(closed).toBe(0)
      yield* Scope.close(a, Exit.void)
      expect(closed).toBe(1)
    }))

  it.effect("closeNow closes a scope of Effect.sync finalizers at once, as Scope.close does: reverse order, once, the exit kept", () =>
    Effect.gen(function*() {
      const make = (yield* maker)!
      /** Closes a scope of three sync finalizers (the second throws) with `close`, then adds one after. */
      const closing = (close: (scope: Scope.CloseableScope) => Effect.Effect<void>) =>
        Effect.gen(function*() {
          const steps: Array<string> = []
          const scope = make()
          yield* Scope.addFinalizerExit(scope, () => Effect.sync(() => steps.push("first")))
          yield* Scope.addFinalizerExit(scope, () =>
            Effect.sync(() => {
              throw new Error("a finalizer's defect")
            }))
          yield* Scope.addFinalizerExit(scope, (exit) => Effect.sync(() => steps.push(`third, ${exit._tag}`)))
          yield* Effect.exit(close(scope))
          yield* Effect.exit(close(scope))
          yield* Scope.addFinalizerExit(scope, (exit) => Effect.sync(() => steps.push(`after close, ${exit._tag}`)))
          return steps
        })
      const reference = yield* closing((scope) => Scope.close(scope, Exit.fail("bye")))
      let inline: boolean | undefined
      const now = yield* closing((scope) => Effect.sync(() => void (inline ??= closeNow(scope, Exit.fail("bye")))))
      expect(inline).toBe(true)
      expect(now).toEqual(reference)
      expect(reference).toEqual(["third, Failure", "first", "after close, Failure"])
    }))

  it.effect("closeNow leaves a scope with any other finalizer to Scope.close, untouched", () =>
    Effect.gen(function*() {
      const make = (yield* maker)!
      const steps: Array<string> = []
      const scope = make()
      yield* Scope.addFinalizerExit(scope, () => Effect.sync(() => steps.push("sync")))
      const child = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      yield* Scope.addFinalizer(child, Effect.sync(() => steps.push("child")))
      yield* Scope.addFinalizerExit(scope, () => Effect.suspend(() => Effect.sync(() => steps.push("suspended"))))
      expect(closeNow(scope, Exit.void)).toBe(false)
      expect(steps).toEqual([])
      yield* Scope.close(scope, Exit.void)
      expect(steps).toEqual(["suspended", "child", "sync"])
    }))
})
