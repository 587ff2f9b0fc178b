/**
 * The request metrics of `NodeMetrics`: a count and a duration histogram per
 * method, route template and status, rendered by prom-client in the
 * Prometheus text format with cumulative buckets, as Prometheus reads them.
 */
import { describe, expect, it } from "vitest"
import * as NodeMetrics from "../src/NodeMetrics.js"

/** The value of the one line of `text` that starts with `name` and carries every label of `labels`. */
const sample = (text: string, name: string, labels: Record<string, string>) => {
  const lines = text.split("\n").filter((line) =>
    line.startsWith(`${name}{`) && Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))
  )
  expect(lines).toHaveLength(1)
  return Number(lines[0]!.slice(lines[0]!.lastIndexOf(" ") + 1))
}

describe("NodeMetrics: the request metrics", () => {
  it("count each method, route and status apart; the histogram's buckets are cumulative, +Inf is the count, the sum adds the seconds", async () => {
    const metrics = NodeMetrics.make()
    for (const seconds of [0.002, 0.0025, 0.3, 20]) metrics.observeRequest("GET", "/api/v1/me", 200, seconds)
    metrics.observeRequest("GET", "/api/v1/me", 401, 0.0001)
    metrics.observeRequest("POST", "/api/v1/me", 200, 0.0001)
    const text = await metrics.render()
    const me = { method: "GET", route: "/api/v1/me", status: "200" }
    expect(sample(text, "hosting_http_requests_total", me)).toBe(4)
    expect(sample(text, "hosting_http_requests_total", { ...me, status: "401" })).toBe(1)
    expect(sample(text, "hosting_http_requests_total", { ...me, method: "POST" })).toBe(1)
    const bucket = (le: string) => sample(text, "hosting_http_request_duration_seconds_bucket", { ...me, le })
    expect(NodeMetrics.durationBuckets.map((bound) => bucket(String(bound)))).toEqual([0, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3])
    expect(bucket("+Inf")).toBe(4)
    expect(sample(text, "hosting_http_request_duration_seconds_count", me)).toBe(4)
    expect(sample(text, "hosting_http_request_duration_seconds_sum", me)).toBeCloseTo(20.3045, 6)
    expect(text).toContain("# TYPE hosting_http_request_duration_seconds histogram")
    expect(text).toContain("# TYPE hosting_http_requests_total counter")
  })
})
