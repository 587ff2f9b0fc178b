/**
 * A request's services read through to the server's (`internal/requestServices.ts`):
 * every way Effect reads a context's map (a lookup, a copy, an iteration, its
 * size) sees what a plain copy of the server's services with the request's
 * entries set over them would hold.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { RequestServices } from "../src/internal/requestServices.js"

class Shared extends Context.Tag("test/Shared")<Shared, string>() {}
class Replaced extends Context.Tag("test/Replaced")<Replaced, string>() {}
class Own extends Context.Tag("test/Own")<Own, string>() {}
class Added extends Context.Tag("test/Added")<Added, string>() {}

const server = new Map<string, unknown>([[Shared.key, "shared"], [Replaced.key, "the server's"]])

/** The request's services, and the plain map they stand for. */
const both = () => {
  const layered = new RequestServices(server).set(Own.key, "own").set(Replaced.key, "the request's")
  const plain = new Map(server).set(Own.key, "own").set(Replaced.key, "the request's")
  return { layered, plain }
}

const sorted = (map: ReadonlyMap<string, unknown>) => [...map].sort(([a], [b]) => a.localeCompare(b))

describe("RequestServices", () => {
  it("lookups see the request's entries first, then the server's; the server's map is never changed", () => {
    const { layered } = both()
    expect([layered.get(Own.key), layered.get(Replaced.key), layered.get(Shared.key), layered.get("missing")])
      .toEqual(["own", "the request's", "shared", undefined])
    expect([layered.has(Own.key), layered.has(Shared.key), layered.has("missing")]).toEqual([true, true, false])
    layered.set(Shared.key, "set later")
    expect(layered.get(Shared.key)).toBe("set later")
    expect(server.get(Shared.key)).toBe("shared")
    expect(server.size).toBe(2)
  })

  it("a copy, an iteration, forEach, keys, values and size read what a plain map would hold", () => {
    for (const read of [
      (m: Map<string, unknown>) => sorted(new Map(m)),
      (m: Map<string, unknown>) => sorted(new Map([...m])),
      (m: Map<string, unknown>) => sorted(new Map(m.entries())),
      (m: Map<string, unknown>) => {
        const seen = new Map<string, unknown>()
        m.forEach((value, key) => seen.set(key, value))
        return sorted(seen)
      },
      (m: Map<string, unknown>) => [[...m.keys()].sort(), [...m.values()].map(String).sort()],
      (m: Map<string, unknown>) => m.size
    ]) {
      const { layered, plain } = both()
      expect(read(layered)).toEqual(read(plain))
    }
  })

  it("its size is counted without copying the server's entries in (Effect reads it each time a fiber's context is set)", () => {
    let wholeReads = 0
    const counted = new (class extends Map<string, unknown> {
      override entries(): MapIterator<[string, unknown]> {
        wholeReads++
        return super.entries()
      }
      override [Symbol.iterator](): MapIterator<[string, unknown]> {
        return this.entries()
      }
    })(server)
    const layered = new RequestServices(counted).set(Own.key, "own").set(Replaced.key, "the request's")
    expect(layered.size).toBe(both().plain.size)
    expect(wholeReads).toBe(0)
    expect(Context.add(Context.unsafeMake(layered), Added, "added").unsafeMap.size).toBe(both().plain.size + 1)
    expect(wholeReads).toBe(1)
  })

  it("a delete or a clear after lookups leaves what a plain map would", () => {
    const { layered, plain } = both()
    expect(layered.delete(Shared.key)).toBe(plain.delete(Shared.key))
    expect(layered.delete("missing")).toBe(false)
    expect(sorted(layered)).toEqual(sorted(plain))
    expect(layered.has(Shared.key)).toBe(false)
    layered.clear()
    expect([layered.size, layered.has(Own.key), layered.has(Replaced.key)]).toEqual([0, false, false])
    expect(server.size).toBe(2)
  })

  it.effect("as a fiber's context: services read, added and merged as over a plain map", () =>
    Effect.gen(function*() {
      const { layered } = both()
      const context = Context.unsafeMake(layered) as Context.Context<Shared | Replaced | Own>
      const added = Context.add(context, Added, "added")
      const merged = Context.merge(Context.make(Added, "merged"), context)
      const seen = yield* Effect.all([Shared, Replaced, Own, Added]).pipe(Effect.provide(added))
      expect(seen).toEqual(["shared", "the request's", "own", "added"])
      expect(Context.get(merged, Replaced)).toBe("the request's")
      expect(Context.get(merged, Added)).toBe("merged")
      expect(sorted(added.unsafeMap)).toEqual(sorted(new Map(both().plain).set(Added.key, "added")))
    }))
})
