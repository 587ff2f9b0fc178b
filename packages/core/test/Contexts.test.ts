/**
 * Contexts.add gives what Context.add gives, for every way Effect reads a
 * context's map, without copying the context it extends (a transaction's
 * context over a request's, which holds every service of the app).
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { Contexts } from "../src/index.js"

class Shared extends Context.Tag("test/Shared")<Shared, string>() {}
class Replaced extends Context.Tag("test/Replaced")<Replaced, string>() {}
class Added extends Context.Tag("test/Added")<Added, string>() {}

/** A map that counts the times it is read whole. */
class Counted extends Map<string, unknown> {
  wholeReads = 0
  override entries(): MapIterator<[string, unknown]> {
    this.wholeReads++
    return super.entries()
  }
  override [Symbol.iterator](): MapIterator<[string, unknown]> {
    return this.entries()
  }
}

const extended = () => {
  const under = new Counted([[Shared.key, "shared"], [Replaced.key, "before"]])
  return { under, context: Context.unsafeMake<Shared | Replaced>(under) }
}

/** A tag of a string service, whichever. */
type Key = Context.Tag<unknown, string>

/** The context as Contexts.add makes it, and as Context.add makes it. */
const both = (tag: typeof Added | typeof Replaced, value: string) => {
  const { under, context } = extended()
  const key = tag as unknown as Key
  return { under, ours: Contexts.add(context, key, value), effects: Context.add(extended().context, key, value) }
}

const sorted = (map: ReadonlyMap<string, unknown>) => [...map].sort(([a], [b]) => a.localeCompare(b))

describe("Contexts.add", () => {
  it("a service added or replaced is read as Context.add gives it, and the extended context is not changed", () => {
    for (const [tag, value] of [[Added, "added"], [Replaced, "after"]] as const) {
      const { under, ours, effects } = both(tag, value)
      for (const read of [Shared, Replaced, Added]) {
        expect(Context.getOption(ours, read as unknown as Key)).toEqual(Context.getOption(effects, read as unknown as Key))
      }
      expect(ours.unsafeMap.has(Shared.key)).toBe(true)
      expect(sorted(under)).toEqual([[Replaced.key, "before"], [Shared.key, "shared"]])
    }
  })

  it("its size is counted without reading the extended map whole, and matches Context.add's", () => {
    for (const [tag, value] of [[Added, "added"], [Replaced, "after"]] as const) {
      const { under, ours, effects } = both(tag, value)
      expect(ours.unsafeMap.size).toBe(effects.unsafeMap.size)
      expect(under.wholeReads).toBe(0)
    }
  })

  it("a copy, an iteration, a merge and a delete see what Context.add's map holds", () => {
    const reads: ReadonlyArray<(map: Map<string, unknown>) => unknown> = [
      (map) => sorted(new Map(map)),
      (map) => [[...map.keys()].sort(), [...map.values()].map(String).sort()],
      (map) => {
        const seen: Array<string> = []
        map.forEach((_, key) => seen.push(key))
        return seen.sort()
      },
      (map) => [map.delete(Shared.key), sorted(map), map.size]
    ]
    for (const read of reads) {
      const { ours, effects } = both(Added, "added")
      expect(read(ours.unsafeMap)).toEqual(read(effects.unsafeMap))
    }
    const { ours, effects } = both(Added, "added")
    expect(sorted(Context.merge(ours, Context.make(Replaced, "merged")).unsafeMap))
      .toEqual(sorted(Context.merge(effects, Context.make(Replaced, "merged")).unsafeMap))
  })

  it.effect("as a fiber's context: its services are provided as Context.add's are", () =>
    Effect.gen(function*() {
      const { ours } = both(Added, "added")
      const seen = yield* Effect.all([Shared, Replaced, Added]).pipe(Effect.provide(ours as Context.Context<Shared | Replaced | Added>))
      expect(seen).toEqual(["shared", "before", "added"])
      const again = yield* Effect.all([Added, Shared]).pipe(Effect.provide(Contexts.add(ours, Added, "again") as Context.Context<Added | Shared>))
      expect(again).toEqual(["again", "shared"])
    }))
})
