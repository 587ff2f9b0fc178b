import { describe, expect, it } from "@effect/vitest"
import { Ports } from "@hosting/core"
import { Effect } from "effect"
import { newTraceId } from "../src/model/Trace.js"

const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("IdGeneratorTimeOrdered", () => {
  it.effect("makes UUID v7 ids that sort in the order they were made, and never repeats one", () =>
    Effect.gen(function*() {
      const ids = yield* Ports.IdGenerator
      const made: Array<string> = []
      // Thousands within a few milliseconds: ordering must hold inside one millisecond too.
      for (let i = 0; i < 5_000; i++) made.push(yield* ids.next)
      for (const id of made) expect(id).toMatch(uuidV7)
      expect([...made].sort()).toEqual(made)
      expect(new Set(made).size).toBe(made.length)
    }).pipe(Effect.provide(Ports.IdGeneratorTimeOrdered)))

  it("carries the time it was made in its first 48 bits", () => {
    const before = Date.now()
    const id = Effect.runSync(Effect.provide(Effect.flatMap(Ports.IdGenerator, (ids) => ids.next), Ports.IdGeneratorTimeOrdered))
    const millis = parseInt(id.replaceAll("-", "").slice(0, 12), 16)
    expect(millis).toBeGreaterThanOrEqual(before)
    expect(millis).toBeLessThanOrEqual(Date.now())
  })
})

describe("newTraceId", () => {
  it("is 32 lowercase hex digits, not all zero, later ones sorting after earlier ones", () => {
    const made = Array.from({ length: 1_000 }, () => newTraceId())
    for (const id of made) {
      expect(id).toMatch(/^[0-9a-f]{32}$/)
      expect(id).not.toBe("0".repeat(32))
    }
    expect([...made].sort()).toEqual(made)
  })
})
