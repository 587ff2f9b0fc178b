/**
 * The example server's metrics (issue 27): `GET /metrics` in the Prometheus
 * text format, read with a Prometheus text parser: Node's process metrics,
 * and request durations by method, route template and status whose counts
 * move with traffic; on a port of their own with HOSTING_METRICS_PORT; none
 * with HOSTING_METRICS=off.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import parse from "parse-prometheus-text-format"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, type Running, serversWithFixtures } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-metrics-"))
const servers = serversWithFixtures(dir)
afterAll(async () => {
  await servers.stopAll()
  rmSync(dir, { recursive: true, force: true })
})

const startWith = servers.start

const origin = (server: Running) => server.baseUrl.replace(/\/api\/v1$/, "")

/** The count of answered GET requests of a route and status in the parsed metrics. */
const countOf = (families: ReturnType<typeof parse>, route: string, status: string) => {
  const counter = families.find((f) => f.name === "hosting_http_requests_total")
  const sample = counter?.metrics.find((m) => m.labels?.["route"] === route && m.labels?.["status"] === status && m.labels?.["method"] === "GET")
  return Number(sample?.value ?? 0)
}

describe("the example server's metrics", () => {
  it("GET /metrics: Node's process metrics and request durations by route template and status, moving with traffic", async () => {
    const server = await startWith({})
    const scrape = async () => {
      const answer = await fetch(`${origin(server)}/metrics`)
      expect(answer.status).toBe(200)
      expect(answer.headers.get("content-type")).toContain("text/plain")
      return parse(await answer.text())
    }
    const before = await scrape()
    for (let i = 0; i < 3; i++) {
      expect((await fetch(`${server.baseUrl}/me`, { headers: { authorization: "Bearer alice-token" } })).status).toBe(200)
    }
    expect((await fetch(`${server.baseUrl}/accounts/nobody`, { headers: { authorization: "Bearer alice-token" } })).status).toBe(404)
    const after = await scrape()
    expect(countOf(after, "/api/v1/me", "200") - countOf(before, "/api/v1/me", "200")).toBe(3)
    expect(countOf(after, "/api/v1/accounts/:account", "404") - countOf(before, "/api/v1/accounts/:account", "404")).toBe(1)
    expect(after.find((f) => f.name === "hosting_http_requests_total")!.type).toBe("COUNTER")
    const histogram = after.find((f) => f.name === "hosting_http_request_duration_seconds")!
    expect(histogram.type).toBe("HISTOGRAM")
    expect(histogram.metrics.length).toBeGreaterThan(0)
    // Paths with ids never become labels: only templates.
    const text = await (await fetch(`${origin(server)}/metrics`)).text()
    expect(text).not.toContain("nobody")
    expect(text).toMatch(/hosting_http_request_duration_seconds_count\{[^}]*route="\/api\/v1\/me"[^}]*\} [1-9]/)
    const names = after.map((f) => f.name)
    for (const name of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds"]) {
      expect(names).toContain(name)
    }
  }, 60_000)

  it("HOSTING_METRICS_PORT serves them on a port of their own, not the API's; HOSTING_METRICS=off serves none", async () => {
    const port = await freePort()
    const server = await startWith({ HOSTING_METRICS_PORT: String(port) })
    // The API's port has no metrics (the dashboard's page answers any other path).
    expect((await fetch(`${origin(server)}/metrics`)).headers.get("content-type")).not.toContain("text/plain")
    const own = await fetch(`http://127.0.0.1:${port}/metrics`)
    expect(own.status).toBe(200)
    expect(parse(await own.text()).some((f) => f.name === "hosting_http_request_duration_seconds")).toBe(true)
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404)
    const off = await startWith({ HOSTING_METRICS: "off", HOSTING_DASHBOARD: "off" })
    expect((await fetch(`${origin(off)}/metrics`)).status).toBe(404)
  }, 60_000)
})
