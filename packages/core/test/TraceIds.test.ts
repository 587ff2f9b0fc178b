/**
 * Span ids of turn traces (`Trace.newSpanId`): W3C Trace Context's form (16
 * lowercase hex digits, never all zero), drawn from the random pool without
 * repeating, across its refills.
 */
import { describe, expect, it } from "@effect/vitest"
import { Trace } from "@hosting/core"

describe("Trace.newSpanId", () => {
  it("gives 16 lowercase hex digits, never all zero, and no id twice over many refills of its pool", () => {
    const ids = Array.from({ length: 20_000 }, () => Trace.newSpanId())
    for (const id of ids) expect(id).toMatch(/^(?!0{16})[0-9a-f]{16}$/)
    expect(new Set(ids).size).toBe(ids.length)
    // Every hex digit turns up in every place: the bytes are drawn, not fixed.
    for (let place = 0; place < 16; place++) expect(new Set(ids.map((id) => id[place])).size).toBe(place === 15 ? 8 : 16)
  })
})
