/**
 * `Recent.make(max)`: a map of at most `max` entries that drops the entry
 * set longest ago when a new key comes, as a native `Map` does when its
 * first key is deleted before each new one (the model below), without
 * walking the holes such deletions leave.
 */
import { describe, expect, it } from "@effect/vitest"
import { Recent } from "../src/index.js"

/** The model: a native Map that drops its first key when full, and moves a key set again to the end. */
class Model<K, V> {
  readonly map = new Map<K, V>()
  constructor(readonly max: number) {}
  set(key: K, value: V) {
    if (!this.map.delete(key) && this.map.size >= this.max) this.map.delete(this.map.keys().next().value!)
    this.map.set(key, value)
  }
}

/** A deterministic stream of numbers in [0, 1) (a linear congruential generator), so a failure can be replayed. */
const numbers = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648

describe("Recent", () => {
  it("holds at most max entries and drops the one set longest ago, as the model does, under any mix of operations", () => {
    for (const max of [1, 2, 3, 10, 100]) {
      const next = numbers(max * 7919)
      const recent = Recent.make<number, number>(max)
      const model = new Model<number, number>(max)
      for (let step = 0; step < 20_000; step++) {
        const key = Math.floor(next() * max * 3)
        const roll = next()
        if (roll < 0.6) {
          recent.set(key, step)
          model.set(key, step)
        } else if (roll < 0.7) {
          expect(recent.delete(key)).toBe(model.map.delete(key))
        } else if (roll < 0.7001) {
          recent.clear()
          model.map.clear()
        } else {
          expect(recent.get(key)).toBe(model.map.get(key))
          expect(recent.has(key)).toBe(model.map.has(key))
        }
        expect(recent.size).toBe(model.map.size)
        expect(recent.size).toBeLessThanOrEqual(max)
        if (step % 1_000 === 0) expect([...recent]).toEqual([...model.map])
      }
      expect([...recent]).toEqual([...model.map])
    }
  })

  it("a key set again is the newest: the least recently set goes first", () => {
    const recent = Recent.make<string, number>(3)
    recent.set("a", 1).set("b", 2).set("c", 3)
    recent.set("a", 4)
    recent.set("d", 5)
    expect([...recent]).toEqual([["c", 3], ["a", 4], ["d", 5]])
    expect(recent.has("b")).toBe(false)
  })

  it("an entry deleted while the entries are walked is not visited, and a value of undefined is kept as one", () => {
    const recent = Recent.make<string, number | undefined>(4)
    recent.set("a", undefined).set("b", 2).set("c", 3).set("d", 4)
    recent.set("e", 5)
    const seen: Array<string> = []
    for (const [key] of recent) {
      seen.push(key)
      if (key === "b") recent.delete("d")
    }
    expect(seen).toEqual(["b", "c", "e"])
    const kept = Recent.make<string, undefined>(2).set("x", undefined)
    expect(kept.has("x")).toBe(true)
    expect(kept.get("x")).toBeUndefined()
  })
})
