/**
 * The example server's metrics (issue 27): `GET /metrics` in the Prometheus
 * text format, read with a Prometheus text parser: Node's process metrics,
 * and request durations by method, route template and status whose counts
 * move with traffic; what the services measure (open streams, replies in
 * flight, chunk and event lags, group commits, storage operations, the
 * Postgres pool); on a port of their own with HOSTING_METRICS_PORT; none
 * with HOSTING_METRICS=off.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import parse from "parse-prometheus-text-format"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { randomUUID } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, type Running, serversWithFixtures } from "./process.js"
import { sleep } from "./traffic.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-metrics-"))
const servers = serversWithFixtures(dir)
const databases: Array<TestDatabase.TestDatabase> = []
afterAll(async () => {
  await servers.stopAll()
  await Promise.all(databases.map((d) => d.drop()))
  rmSync(dir, { recursive: true, force: true })
})

const startWith = servers.start
const pgAvailable = await TestDatabase.isAvailable()

const origin = (server: Running) => server.baseUrl.replace(/\/api\/v1$/, "")

/** The count of answered GET requests of a route and status in the parsed metrics. */
const countOf = (families: ReturnType<typeof parse>, route: string, status: string) => {
  const counter = families.find((f) => f.name === "hosting_http_requests_total")
  const sample = counter?.metrics.find((m) => m.labels?.["route"] === route && m.labels?.["status"] === status && m.labels?.["method"] === "GET")
  return Number(sample?.value ?? 0)
}

/** The value of one series in the metrics text (`name{labels} value`, labels as written, or none). */
const valueIn = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

/** Reads a streamed body until `until` appears in it; `close` cancels it. */
const readUntil = async (response: Response, until: string) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  const more = async (what: string) => {
    while (!text.includes(what)) {
      const chunk = await reader.read()
      if (chunk.done) throw new Error(`the stream ended before ${JSON.stringify(what)}:\n${text}`)
      text += decoder.decode(chunk.value, { stream: true })
    }
  }
  await more(until)
  return { more, close: () => reader.cancel() }
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

  it("what the services measure: open event and reply streams, replies in flight, chunk and event lags, group commits, storage operations", async () => {
    const server = await startWith({ HOSTING_ECHO_DELAY_MS: "100" })
    const metrics = async () => (await fetch(`${origin(server)}/metrics`)).text()
    const auth = { authorization: "Bearer alice-token" }
    const idle = await metrics()
    expect(valueIn(idle, "hosting_event_streams_open") ?? 0).toBe(0)

    const events = await readUntil(await fetch(`${server.baseUrl}/accounts/acme/events`, { headers: auth }), "event: ready")
    const chat = `/deployments/dep-1/messaging/conversations/${randomUUID()}`
    const sent = await fetch(`${server.baseUrl}${chat}/messages`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ content: "one two three four five six seven eight" })
    })
    expect(sent.status).toBe(200)
    const reply = await readUntil(await fetch(`${server.baseUrl}${chat}/stream`, { headers: auth }), "event: message.delta")
    const streaming = await metrics()
    expect(valueIn(streaming, "hosting_event_streams_open")).toBe(1)
    expect(valueIn(streaming, "hosting_reply_streams_open")).toBe(1)
    expect(valueIn(streaming, "hosting_replies_in_flight")).toBe(1)

    await reply.more("event: message.completed")
    const registered = await fetch(`${server.baseUrl}/agents/acme/measured/register`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ build_id: "b-1", registry: "ghcr.io/acme", spec_content: "name: measured\ndescription: d\n" })
    })
    expect(registered.status).toBe(201)
    await events.more("event: agent.build")
    // The reply's end is stored a moment after its last chunk went out.
    let done = await metrics()
    for (let i = 0; i < 50 && valueIn(done, "hosting_replies_in_flight") !== 0; i++) {
      await sleep(100)
      done = await metrics()
    }
    expect(valueIn(done, "hosting_replies_in_flight")).toBe(0)
    // Every chunk that reached the stream was timed from its arrival; the registration's event from its commit.
    expect(valueIn(done, "hosting_reply_chunk_lag_seconds_count")).toBeGreaterThanOrEqual(1)
    expect(valueIn(done, "hosting_reply_chunk_lag_seconds_bucket{le=\"+Inf\"}")).toBe(valueIn(done, "hosting_reply_chunk_lag_seconds_count"))
    expect(valueIn(done, "hosting_event_delivery_lag_seconds_count")).toBe(1)
    expect(valueIn(done, "hosting_group_commit_batch_size_count")).toBeGreaterThanOrEqual(1)
    expect(done).toMatch(/^# TYPE hosting_storage_operation_duration_seconds histogram$/m)
    expect(valueIn(done, "hosting_storage_operation_duration_seconds_count{operation=\"SqlAgentStore.upsertBuild\"}")).toBeGreaterThanOrEqual(1)
    expect(done).toMatch(/^hosting_storage_operation_duration_seconds_bucket\{operation="SqlConversationStore\.[A-Za-z]+",le="0\.001"\} \d+$/m)

    await Promise.all([events.close(), reply.close()])
    let closed = await metrics()
    for (let i = 0; i < 50 && (valueIn(closed, "hosting_event_streams_open") !== 0 || valueIn(closed, "hosting_reply_streams_open") !== 0); i++) {
      await sleep(100)
      closed = await metrics()
    }
    expect(valueIn(closed, "hosting_event_streams_open")).toBe(0)
    expect(valueIn(closed, "hosting_reply_streams_open")).toBe(0)
    // The parser reads the gauges as what they are.
    const families = parse(closed)
    expect(families.find((f) => f.name === "hosting_replies_in_flight")?.type).toBe("GAUGE")
  }, 60_000)

  it.skipIf(!pgAvailable)("on Postgres: the pool's connections, open, idle and waiting", async () => {
    const database = await TestDatabase.create()
    databases.push(database)
    const server = await startWith({ HOSTING_DATABASE_URL: database.url, HOSTING_DATABASE_POOL_SIZE: "4" })
    expect((await fetch(`${server.baseUrl}/me`, { headers: { authorization: "Bearer alice-token" } })).status).toBe(200)
    let text = ""
    for (let i = 0; i < 30 && !((valueIn(text, "hosting_database_pool_connections{state=\"total\"}") ?? 0) > 0); i++) {
      await sleep(200)
      text = await (await fetch(`${origin(server)}/metrics`)).text()
    }
    const total = valueIn(text, "hosting_database_pool_connections{state=\"total\"}")!
    expect(total).toBeGreaterThan(0)
    expect(total).toBeLessThanOrEqual(4)
    expect(valueIn(text, "hosting_database_pool_connections{state=\"idle\"}")).toBeLessThanOrEqual(total)
    expect(valueIn(text, "hosting_database_pool_connections{state=\"waiting\"}")).toBe(0)
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
