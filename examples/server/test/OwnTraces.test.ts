/**
 * The server's own traces (issue 27): with the standard `OTEL_*` variables
 * the server exports its spans with the official OTLP/HTTP exporter, here to
 * a receiver on loopback that records them, and to another example server's
 * own ingest route; a request's W3C `traceparent` is continued, passed on to
 * the agent by the HTTP agent runtime, and the chat turn's stored trace
 * carries its trace id. Without the variables (or with the SDK disabled)
 * the tracer stays off: nothing is exported, and the agent is sent the
 * turn's own trace instead of the request's.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { randomBytes, randomUUID } from "node:crypto"
import { ConfigProvider, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { config } from "../src/ServerConfig.js"
import { call, type Running, serversWithFixtures, writeFixtures } from "./process.js"
import { sleep } from "./traffic.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-own-traces-"))
const servers = serversWithFixtures(dir)
const listening: Array<Server> = []

/** A loopback HTTP server for the test's life. */
const serve = async (handler: (req: IncomingMessage, res: ServerResponse, body: string) => void) => {
  const server = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => handler(req, res, body))
  })
  listening.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** The `traceparent` of each request the agent got. */
const agentSaw: Array<string | undefined> = []
/** Every span the receiver got, with its resource's `service.name`. */
const exported: Array<{ readonly service: unknown; readonly span: any }> = []
let agentUrl = ""
let receiverUrl = ""
let fixtures = ""

beforeAll(async () => {
  // An OpenAI-compatible agent: one streamed chunk, then the end.
  agentUrl = await serve((req, res) => {
    agentSaw.push(req.headers["traceparent"] as string | undefined)
    res.writeHead(200, { "content-type": "text/event-stream" })
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "traced reply" } }] })}\n\n`)
    res.end("data: [DONE]\n\n")
  })
  // An OTLP/HTTP JSON receiver.
  receiverUrl = await serve((req, res, body) => {
    if (req.url === "/v1/traces" && req.headers["content-type"] === "application/json") {
      for (const resource of JSON.parse(body).resourceSpans ?? []) {
        const service = resource.resource?.attributes?.find((a: any) => a.key === "service.name")?.value?.stringValue
        for (const scope of resource.scopeSpans ?? []) for (const span of scope.spans ?? []) exported.push({ service, span })
      }
    }
    res.writeHead(200, { "content-type": "application/json" })
    res.end("{}")
  })
  // The shared fixtures, with acme/helper's deployment pointed at the agent.
  const shared = JSON.parse(readFileSync(writeFixtures(dir), "utf8"))
  shared.deployments[0].spec = { endpoint: agentUrl }
  fixtures = join(dir, "agent-fixtures.json")
  writeFileSync(fixtures, JSON.stringify(shared))
})

afterAll(async () => {
  await servers.stopAll()
  await Promise.all(listening.map((server) => new Promise((resolve) => server.close(resolve))))
  rmSync(dir, { recursive: true, force: true })
})

const withAgent = (env: Record<string, string>) =>
  servers.start({ HOSTING_FIXTURES: fixtures, HOSTING_AGENT_RUNTIME: "http", ...env })

const hex = (bytes: number) => randomBytes(bytes).toString("hex")

/** Polls `read` until `done` holds of its result, for five seconds at most. */
const eventually = async <A>(read: () => Promise<A> | A, done: (a: A) => boolean): Promise<A> => {
  const deadline = Date.now() + 5000
  let value = await read()
  while (!done(value) && Date.now() < deadline) {
    await sleep(50)
    value = await read()
  }
  return value
}

/** Sends a chat turn as bob (with `headers`), waits for its reply and answers the turn's stored trace. */
const chatTurn = async (server: Running, headers: Record<string, string>) => {
  const path = `/deployments/dep-1/messaging/conversations/${randomUUID()}/messages`
  const content = `question ${randomUUID()}`
  const sent = await fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: "Bearer bob-token", "content-type": "application/json", ...headers },
    body: JSON.stringify({ content })
  })
  expect(sent.status).toBe(200)
  const history = await eventually(() => call(server, "GET", path, "bob-token"), (h) => h.body.messages?.at(-1)?.status === "complete")
  expect(history.body.messages.at(-1).content).toBe("traced reply")
  const traces = await eventually(
    () => call(server, "GET", "/agents/acme/helper/observability/traces?limit=500", "bob-token"),
    (t) => t.body.traces.some((trace: any) => trace.input === content)
  )
  return traces.body.traces.find((trace: any) => trace.input === content)
}

/** ServerConfig.otlpTraces of these variables alone. */
const otlpTracesOf = (env: Record<string, string>) =>
  Effect.runSync(Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))).otlpTraces

describe("the server's own traces", () => {
  it("are exported when an OTLP endpoint is set, unless the SDK is disabled or the traces exporter is none; named hosting unless named", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }
    expect(otlpTracesOf({})).toBeUndefined()
    expect(otlpTracesOf(endpoint)).toEqual({ defaultServiceName: "hosting" })
    expect(otlpTracesOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" })).toEqual({ defaultServiceName: "hosting" })
    expect(otlpTracesOf({ ...endpoint, OTEL_SERVICE_NAME: "acme/helper" })).toEqual({ defaultServiceName: undefined })
    expect(otlpTracesOf({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,service.name=api" }))
      .toEqual({ defaultServiceName: undefined })
    expect(otlpTracesOf({ ...endpoint, OTEL_SDK_DISABLED: "TRUE" })).toBeUndefined()
    expect(otlpTracesOf({ ...endpoint, OTEL_TRACES_EXPORTER: "none" })).toBeUndefined()
  })

  it("exports its spans over OTLP; a request's traceparent is continued, passed to the agent and kept by the turn's trace", async () => {
    const server = await withAgent({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
      OTEL_SERVICE_NAME: "acme/helper",
      OTEL_BSP_SCHEDULE_DELAY: "100"
    })
    const [traceId, parentId] = [hex(16), hex(8)]
    const probeTrace = hex(16)
    expect((await fetch(`${server.baseUrl.replace("/api/v1", "")}/healthz`, { headers: { traceparent: `00-${probeTrace}-${hex(8)}-01` } })).status)
      .toBe(200)

    const turn = await chatTurn(server, { traceparent: `00-${traceId}-${parentId}-01` })
    expect(turn.trace_id).toBe(traceId)
    expect(agentSaw.at(-1)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))

    const spans = await eventually(
      () => exported.filter((e) => e.span.traceId === traceId),
      (found) => found.some((e) => e.span.name === "HttpAgentRuntime.reply")
    )
    const request = spans.find((e) => e.span.name === "http.server POST")
    expect(request?.span.parentSpanId).toBe(parentId)
    expect(request?.span.kind).toBe(2) // SERVER
    expect(request?.service).toBe("acme/helper")
    // The agent's spans become children of the reply's span.
    const reply = spans.find((e) => e.span.name === "HttpAgentRuntime.reply")
    expect(agentSaw.at(-1)).toBe(`00-${traceId}-${reply?.span.spanId}-01`)
    // The probes are not traced.
    expect(exported.some((e) => e.span.traceId === probeTrace)).toBe(false)
    await server.stop()
  })

  it("sends to an example server's own OTLP ingest: a request's root span becomes a trace of the agent named by OTEL_SERVICE_NAME", async () => {
    const receiving = await servers.start({})
    const server = await servers.start({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiving.baseUrl.replace("/api/v1", "/api/v1/otlp"),
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20alice-token",
      OTEL_SERVICE_NAME: "acme/helper",
      OTEL_BSP_SCHEDULE_DELAY: "100"
    })
    const registered = await call(receiving, "POST", "/agents/acme/helper/register", "alice-token", {
      build_id: "b-traced",
      registry: "ghcr.io/acme",
      spec_content: "name: helper\ndescription: d\n"
    })
    expect(registered.status).toBe(201)
    expect((await call(server, "GET", "/agents")).status).toBe(200)
    const stored = await eventually(
      () => call(receiving, "GET", "/agents/acme/helper/observability/traces?limit=500", "alice-token"),
      (t) => t.body.traces?.some((trace: any) => trace.name === "http.server GET")
    )
    const trace = stored.body.traces.find((trace: any) => trace.name === "http.server GET")
    expect(trace?.trace_id).toMatch(/^[0-9a-f]{32}$/)
    expect(trace?.status).toBe("ok")
    // The exports themselves are not traced, so the receiver's own server sent nothing back: only the request's trace.
    expect(stored.body.traces.filter((t: any) => t.name.startsWith("http.server"))).toHaveLength(1)
  })

  it("without an OTLP endpoint, or with the SDK disabled, the tracer stays off: nothing exported, the request's traceparent not continued (the agent gets the turn's own)", async () => {
    // Each server here names itself, so that a late export of an earlier test's server (which the receiver
    // also records) cannot be taken for one of these.
    const service = `tracer-off-${randomUUID()}`
    const ours = () => exported.filter((e) => e.service === service).length
    for (const env of [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl, OTEL_SDK_DISABLED: "true", OTEL_BSP_SCHEDULE_DELAY: "100" }]) {
      const server = await withAgent({ ...env, OTEL_SERVICE_NAME: service })
      const traceId = hex(16)
      const turn = await chatTurn(server, { traceparent: `00-${traceId}-${hex(8)}-01` })
      expect(turn.trace_id).not.toBe(traceId)
      // The agent is sent the turn's own trace (issue 30), not the request's.
      expect(agentSaw.at(-1)).toMatch(new RegExp(`^00-${turn.trace_id}-[0-9a-f]{16}-01$`))
      await sleep(500)
      expect(ours()).toBe(0)
      await server.stop()
    }
  })
})
