/**
 * The dashboard's pure pieces, without a browser: placing reply deltas,
 * matching routes, and the numbers of the latency chart.
 */
import { describe, expect, it } from "vitest"
import { placeDelta } from "../src/api/replies.js"
import { formatMs, niceCeiling } from "../src/chart.js"
import { match, pathOf } from "../src/paths.js"

describe("reply deltas (docs/chat.md: each delta carries its index)", () => {
  it("appends a delta that starts where the text ends", () => {
    expect(placeDelta("", 0, "hello")).toBe("hello")
    expect(placeDelta("hello", 5, " world")).toBe("hello world")
  })

  it("drops a delta repeated after a reconnection, and trims one that overlaps", () => {
    expect(placeDelta("hello world", 5, " world")).toBe("hello world")
    expect(placeDelta("hello wo", 0, "hello world")).toBe("hello world")
    expect(placeDelta("hello", 3, "lo there")).toBe("hello there")
  })

  it("keeps a delta that comes after a gap rather than lose it", () => {
    expect(placeDelta("ab", 5, "xyz")).toBe("abxyz")
  })
})

describe("routes", () => {
  it("matches literal segments and decodes parameters", () => {
    expect(match("/agents/:account/:name", "/agents/acme/helper")).toEqual({ account: "acme", name: "helper" })
    expect(match("/agents/:account/:name", "/agents/acme/helper/traces")).toBeUndefined()
    expect(match("/deployments/:deployment/files", "/deployments/dep%2F1/files")).toEqual({ deployment: "dep/1" })
    expect(match("/", "/")).toEqual({})
    expect(match("/accounts/:account", "/accounts/%E0%A4%A")).toBeUndefined()
  })

  it("builds paths with each segment encoded", () => {
    expect(pathOf("deployments", "dep/1", "chat")).toBe("/deployments/dep%2F1/chat")
    expect(match("/deployments/:deployment/chat", pathOf("deployments", "a b?", "chat"))).toEqual({ deployment: "a b?" })
  })
})

describe("latency chart numbers", () => {
  it("rounds the axis up to 1, 2 or 5 times a power of ten", () => {
    expect(niceCeiling(0)).toBe(1)
    expect(niceCeiling(12.5)).toBe(20)
    expect(niceCeiling(367)).toBe(500)
    expect(niceCeiling(500)).toBe(500)
    expect(niceCeiling(755)).toBe(1000)
    expect(niceCeiling(0.3)).toBeCloseTo(0.5)
  })

  it("writes latencies in ms, or in s from a second on", () => {
    expect(formatMs(0)).toBe("0 ms")
    expect(formatMs(7.25)).toBe("7.3 ms")
    expect(formatMs(12.5)).toBe("13 ms")
    expect(formatMs(1500)).toBe("1.5 s")
    expect(formatMs(12_000)).toBe("12 s")
  })
})
