/**
 * The registries of what is in flight answer as a `Set` and a `Map` answer,
 * across the renewals of their table; effect's register of root fibers,
 * once renewed, still lists the fibers that run; daemons are interrupted
 * when their scope closes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import * as Daemons from "../src/internal/daemons.js"
import { InFlight } from "../src/index.js"

/** A deterministic sequence of keys in 0..99, so that keys come, go and come back. */
const keys = (count: number, seed: number) => {
  let state = seed
  return Array.from({ length: count }, () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state % 100
  })
}

/** The native table a registry holds now (private: read here to see that it is made anew). */
const tableOf = (registry: object): unknown => (registry as { readonly table: unknown }).table

describe("InFlight", () => {
  it("an InFlightSet answers as a Set through thousands of additions and deletions (its table renewed many times)", () => {
    const ours = new InFlight.InFlightSet<number>()
    const set = new Set<number>()
    const tables = new Set<unknown>()
    keys(5000, 7).forEach((key, i) => {
      if (i % 3 === 0) {
        expect(ours.add(key)).toBe(ours)
        set.add(key)
      } else {
        expect(ours.delete(key)).toBe(set.delete(key))
      }
      expect(ours.size).toBe(set.size)
      expect(ours.has(key)).toBe(set.has(key))
      tables.add(tableOf(ours))
    })
    expect(tables.size).toBeGreaterThan(10)
    expect([...ours]).toEqual([...set])
    expect([...ours.values()]).toEqual([...set.values()])
    ours.clear()
    expect(ours.size).toBe(0)
    expect([...ours]).toEqual([])
  })

  it("an InFlightMap answers as a Map through thousands of sets and deletions (its table renewed many times)", () => {
    const ours = new InFlight.InFlightMap<number, string>()
    const map = new Map<number, string>()
    const tables = new Set<unknown>()
    keys(5000, 11).forEach((key, i) => {
      if (i % 3 === 0) {
        expect(ours.set(key, `v${i}`)).toBe(ours)
        map.set(key, `v${i}`)
      } else {
        expect(ours.delete(key)).toBe(map.delete(key))
      }
      expect(ours.size).toBe(map.size)
      expect(ours.get(key)).toBe(map.get(key))
      expect(ours.has(key)).toBe(map.has(key))
      tables.add(tableOf(ours))
    })
    expect(tables.size).toBeGreaterThan(10)
    expect([...ours]).toEqual([...map])
    expect([...ours.keys()]).toEqual([...map.keys()])
    expect([...ours.values()]).toEqual([...map.values()])
    expect([...ours.entries()]).toEqual([...map.entries()])
    ours.clear()
    expect(ours.size).toBe(0)
  })

  it("after renewFiberRoots (twice), Fiber.roots lists the root fibers that run: those from before, and a daemon until it ends", () =>
    Effect.gen(function*() {
      const before = yield* Effect.forkDaemon(Effect.never)
      InFlight.renewFiberRoots()
      InFlight.renewFiberRoots()
      const release = yield* Deferred.make<void>()
      const daemon = yield* Effect.forkDaemon(Deferred.await(release))
      const roots = yield* Fiber.roots
      expect(roots).toContain(before)
      expect(roots).toContain(daemon)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(daemon)
      expect(yield* Fiber.roots).not.toContain(daemon)
      yield* Fiber.interrupt(before)
      expect(yield* Fiber.roots).not.toContain(before)
    }).pipe(Effect.runPromise))

  it("daemons run until they end; those still running when the scope closes are interrupted, and one asked for later at once", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const daemons = yield* Scope.extend(Daemons.make, scope)
      const ends = yield* daemons.run(Effect.succeed(1))
      expect(yield* Fiber.join(ends)).toBe(1)
      const waits = yield* daemons.run(Effect.never)
      yield* Scope.close(scope, Exit.void)
      expect(Exit.isInterrupted(yield* Fiber.await(waits))).toBe(true)
      const late = yield* daemons.run(Effect.never)
      expect(Exit.isInterrupted(yield* Fiber.await(late))).toBe(true)
    }).pipe(Effect.runPromise))
})
