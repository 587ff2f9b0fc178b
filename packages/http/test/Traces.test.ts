/**
 * The observability routes over HTTP: the traces listing of interface.md
 * (Observability, Limits) and the OTLP ingestion of extensions.md, driven by
 * the OpenTelemetry SDK and its OTLP/HTTP exporter.
 */
import { context, SpanKind, SpanStatusCode, trace as otelTrace } from "@opentelemetry/api"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { OTLPTraceExporter as OTLPProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto"
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace"
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Ids, Ports, Trace } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { DateTime, Effect, Option } from "effect"
import { gzipSync } from "node:zlib"
import protobuf from "protobufjs"
import { conversationPath, deployedAgent, newConversationId, send, settledHistory } from "./ChatHelpers.js"
import { expectErrorBody, layer, port, raw, registerBody } from "./HttpTestServer.js"

const tracesPath = (account: string, agent = "helper") => `/agents/${account}/${agent}/observability/traces`

/** Stores traces of the team's agent `helper` directly, one an hour from 2026-11-01T00:00Z. */
const seedTraces = (team: Seed.Team, count: number, status: (i: number) => Trace.TraceStatus = () => "ok") =>
  Effect.gen(function*() {
    const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(team.account))
    yield* (yield* Ports.TraceStore).append(Array.from({ length: count }, (_, i) =>
      new Trace.TraceRecord({
        publisher_id: account.id,
        agent_name: Ids.AgentName.make("helper"),
        account_id: account.id,
        owner_id: Option.none(),
        trace_id: `t-${String(i).padStart(3, "0")}`,
        name: "chat",
        status: status(i),
        latency_ms: i + 0.5,
        input: `in ${i}`,
        output: `out ${i}`,
        timestamp: DateTime.unsafeMake(Date.UTC(2026, 10, 1, i))
      })))
  })

/** Registers the team's agent `helper` (OTLP takes spans only for registered agents). */
const registerHelper = (team: Seed.Team) =>
  Effect.map(
    raw("POST", `/agents/${team.account}/helper/register`, { token: team.tokens.owner, json: registerBody("b-1") }),
    (r) => expect(r.status).toBe(201)
  )

/** The traces page once a chat turn's trace is stored (within two seconds; traces are written with the next flush). */
const firstTraces = (account: string, token: string) =>
  Effect.gen(function*() {
    let page = yield* raw("GET", tracesPath(account), { token })
    for (let i = 0; i < 100 && page.body.total === 0; i++) {
      yield* Effect.sleep("20 millis")
      page = yield* raw("GET", tracesPath(account), { token })
    }
    return page
  })

const ids = (body: { traces: ReadonlyArray<{ trace_id: string }> }) => body.traces.map((t) => t.trace_id)

/** Spans made by the OpenTelemetry SDK for a service, collected in memory. */
const spansOf = (service: string, build: (tracer: ReturnType<TracerProvider["getTracer"]>) => void) =>
  Effect.promise(async () => {
    const memory = new InMemorySpanExporter()
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ "service.name": service }),
      spanProcessors: [new SimpleSpanProcessor({ exporter: memory })]
    })
    build(provider.getTracer("hosting-test"))
    await provider.forceFlush()
    const spans = memory.getFinishedSpans()
    await provider.shutdown()
    return spans
  })

/** How an exporter sends: OTLP/HTTP JSON or protobuf, gzip-compressed or not. */
interface Wire {
  readonly protocol: "json" | "protobuf"
  readonly compression: "gzip" | "none"
}

/**
 * Exports spans with the real OTLP/HTTP exporter (`-http` for JSON, `-proto`
 * for protobuf); resolves with the export's result code and error.
 */
const exportSpans = (token: string, spans: ReadonlyArray<ReadableSpan>, wire: Wire = { protocol: "json", compression: "none" }) =>
  Effect.flatMap(port, (p) =>
    Effect.promise(() => {
      const config = {
        url: `http://127.0.0.1:${p}/api/v1/otlp/v1/traces`,
        headers: { Authorization: `Bearer ${token}` },
        compression: wire.compression as any
      }
      const exporter = wire.protocol === "json" ? new OTLPTraceExporter(config) : new OTLPProtoTraceExporter(config)
      return new Promise<{ code: number; error?: Error }>((resolve) =>
        exporter.export([...spans], (result) => resolve({ code: result.code, ...(result.error ? { error: result.error } : {}) }))
      ).finally(() => exporter.shutdown())
    }))

/** A binary POST whose answer is read as bytes (a protobuf answer), with its status and content type. */
const rawBytes = (path: string, token: string, bytes: Uint8Array, headers: Record<string, string>) =>
  Effect.flatMap(port, (p) =>
    Effect.promise(async () => {
      const response = await fetch(`http://127.0.0.1:${p}/api/v1${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, ...headers },
        body: bytes as Uint8Array<ArrayBuffer>
      })
      return {
        status: response.status,
        contentType: response.headers.get("content-type"),
        bytes: new Uint8Array(await response.arrayBuffer())
      }
    }))

/** google.rpc.Status, as googleapis declares it (less its `details`), read with protobufjs. */
const rpcStatus = protobuf.parse(
  `syntax = "proto3"; package google.rpc; message Status { int32 code = 1; string message = 2; }`
).root.lookupType("google.rpc.Status")

/** The code and message of a protobuf google.rpc.Status body. */
const rpcStatusOf = (bytes: Uint8Array) => rpcStatus.toObject(rpcStatus.decode(bytes), { defaults: true }) as { code: number; message: string }

/** One agent turn as an instrumented agent would record it: a root span and an LLM call inside it. */
const agentTurn = (tracer: ReturnType<TracerProvider["getTracer"]>, name: string, failed: boolean) => {
  const start = Date.UTC(2026, 10, 2, 9, 0, 0)
  const root = tracer.startSpan(name, { startTime: start, attributes: { "input.value": `question for ${name}` } })
  const inner = otelTrace.setSpan(context.active(), root)
  const llm = tracer.startSpan("llm", { startTime: start + 5, attributes: { "gen_ai.completion": `answer of ${name}` } }, inner)
  llm.end(start + 200)
  if (failed) root.setStatus({ code: SpanStatusCode.ERROR, message: "tool failed" })
  root.end(start + 250)
}

describe("HTTP: observability", () => {
  withLayer(layer({ echo: { delay: "1 millis" } }), { excludeTestServices: true })((it) => {
    it.effect("traces are paginated: newest first, default limit 50 and offset 0, total counts the filtered set", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* seedTraces(team, 60)
        const first = yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })
        expect(first.status).toBe(200)
        expect([first.body.total, first.body.limit, first.body.offset, first.body.traces.length]).toEqual([60, 50, 0, 50])
        expect(ids(first.body).slice(0, 2)).toEqual(["t-059", "t-058"])
        expect(first.body.traces[0]).toEqual({
          trace_id: "t-059",
          name: "chat",
          status: "ok",
          latency_ms: 59.5,
          input: "in 59",
          output: "out 59",
          timestamp: "2026-11-03T11:00:00.000Z",
          model: null,
          usage: null
        })
        const last = yield* raw("GET", `${tracesPath(team.account)}?limit=25&offset=50`, { token: team.tokens.member })
        expect([last.body.total, last.body.limit, last.body.offset]).toEqual([60, 25, 50])
        expect(ids(last.body)).toEqual(Array.from({ length: 10 }, (_, i) => `t-${String(9 - i).padStart(3, "0")}`))
        const max = yield* raw("GET", `${tracesPath(team.account)}?limit=${Trace.maxPageSize}`, { token: team.tokens.member })
        expect(max.body.traces.length).toBe(60)
      }))

    it.effect("start_time and end_time (RFC 3339, both inclusive) and status filter the traces; total follows the filters", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* seedTraces(team, 10, (i) => (i % 4 === 0 ? "error" : "ok"))
        const window = yield* raw(
          "GET",
          `${tracesPath(team.account)}?start_time=2026-11-01T02:00:00Z&end_time=2026-11-01T07:00:00%2B00:00`,
          { token: team.tokens.member }
        )
        expect(ids(window.body)).toEqual(["t-007", "t-006", "t-005", "t-004", "t-003", "t-002"])
        expect(window.body.total).toBe(6)
        const offset = yield* raw("GET", `${tracesPath(team.account)}?start_time=2026-11-01T03:00:00%2B01:00`, { token: team.tokens.member })
        expect(offset.body.total).toBe(8)
        const errors = yield* raw("GET", `${tracesPath(team.account)}?status=error`, { token: team.tokens.member })
        expect([errors.body.total, ids(errors.body)]).toEqual([3, ["t-008", "t-004", "t-000"]])
        const okInWindow = yield* raw("GET", `${tracesPath(team.account)}?status=ok&end_time=2026-11-01T03:00:00Z`, { token: team.tokens.member })
        expect(ids(okInWindow.body)).toEqual(["t-003", "t-002", "t-001"])
      }))

    it.effect("bad query parameters are 400 with {error, details}: times that are not RFC 3339, unknown status, limit out of 1..500, negative offset", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const bad = [
          "start_time=2026-11-01",
          "start_time=yesterday",
          "end_time=2026-11-01%2010:00:00Z",
          "end_time=1730455200",
          "start_time=2026-13-01T00:00:00Z",
          "status=maybe",
          "limit=0",
          `limit=${Trace.maxPageSize + 1}`,
          "limit=1e2",
          "limit=abc",
          "offset=-1",
          "offset=1.5",
          "start_time=2026-11-02T00:00:00Z&end_time=2026-11-01T00:00:00Z"
        ]
        for (const query of bad) {
          const r = yield* raw("GET", `${tracesPath(team.account)}?${query}`, { token: team.tokens.member })
          expect(r.status, query).toBe(400)
          expectErrorBody(r.body, "invalid_request")
        }
      }))

    it.effect("401 without a token; 403 for someone outside the account and for an unknown account", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const anonymous = yield* raw("GET", tracesPath(team.account))
        expect(anonymous.status).toBe(401)
        expectErrorBody(anonymous.body, "unauthorized")
        const outsider = yield* raw("GET", tracesPath(team.account), { token: team.tokens.outsider })
        expect(outsider.status).toBe(403)
        expectErrorBody(outsider.body, "forbidden")
        const unknown = yield* raw("GET", tracesPath("no-such-account-x"), { token: team.tokens.member })
        expect(unknown.status).toBe(403)
      }))

    it.effect("each chat turn records a trace named chat with the message, the reply and its latency", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        const before = Date.now()
        expect((yield* send(team.tokens.member, deployment, conversation, { content: "hello there" })).status).toBe(200)
        const messages = yield* settledHistory(team.tokens.member, deployment, conversation)
        const page = yield* firstTraces(team.account, team.tokens.member)
        expect(page.body.total).toBe(1)
        const [turn] = page.body.traces
        expect(turn).toMatchObject({ name: "chat", status: "ok", input: "hello there", output: messages.at(-1).content })
        expect(turn.trace_id).toMatch(/^[0-9a-f]{32}$/)
        expect(turn.latency_ms).toBeGreaterThan(0)
        expect(Date.parse(turn.timestamp)).toBeGreaterThanOrEqual(before - 5)
        // The deploying account's traces are its own: an outsider still gets 403.
        expect((yield* raw("GET", tracesPath(team.account), { token: team.tokens.outsider })).status).toBe(403)
      }))

    it.effect("a chat turn's trace is listed only to the conversation's owner; exported spans to every member", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        expect((yield* send(team.tokens.member, deployment, conversation, { content: "my private question" })).status).toBe(200)
        yield* settledHistory(team.tokens.member, deployment, conversation)
        const mine = yield* firstTraces(team.account, team.tokens.member)
        expect([mine.body.total, mine.body.traces[0]?.input]).toEqual([1, "my private question"])
        // The other members, the owner of the account among them, are refused the conversation itself...
        const history = `${conversationPath(deployment, conversation)}/messages`
        expect((yield* raw("GET", history, { token: team.tokens.owner })).status).toBe(404)
        // ...and do not read it through its trace either.
        for (const person of ["owner", "admin"] as const) {
          const page = yield* raw("GET", tracesPath(team.account), { token: team.tokens[person] })
          expect([person, page.status, page.body.total, page.body.traces]).toEqual([person, 200, 0, []])
        }
        // What the agent exports itself is the agent's record, seen by every member.
        const spans = yield* spansOf(`${team.account}/helper`, (tracer) => agentTurn(tracer, "exported", false))
        expect((yield* exportSpans(team.tokens.owner, spans)).code).toBe(0)
        for (const person of ["owner", "admin", "member"] as const) {
          const page = yield* raw("GET", tracesPath(team.account), { token: team.tokens[person] })
          expect([person, ...page.body.traces.map((t: any) => t.name).sort()])
            .toEqual(person === "member" ? [person, "chat", "exported"] : [person, "exported"])
        }
      }))

    it.effect("OTLP: spans exported by the OpenTelemetry SDK's OTLP/HTTP exporter become traces, one per root span", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* registerHelper(team)
        const spans = yield* spansOf(`${team.account}/helper`, (tracer) => {
          agentTurn(tracer, "answer", false)
          agentTurn(tracer, "broken", true)
        })
        expect(spans.length).toBe(4)
        const result = yield* exportSpans(team.tokens.member, spans)
        expect(result.error).toBeUndefined()
        expect(result.code).toBe(0)
        const page = yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })
        expect(page.body.total).toBe(2)
        const byName = Object.fromEntries(page.body.traces.map((t: any) => [t.name, t]))
        expect(byName.answer).toMatchObject({
          status: "ok",
          latency_ms: 250,
          input: "question for answer",
          output: "answer of answer",
          timestamp: "2026-11-02T09:00:00.000Z"
        })
        expect(byName.broken).toMatchObject({ status: "error", input: "question for broken", output: "answer of broken" })
        const root = spans.find((s) => s.name === "answer")!
        expect(byName.answer.trace_id).toBe(root.spanContext().traceId)
        // An exporter retrying the same batch stores nothing twice.
        expect((yield* exportSpans(team.tokens.member, spans)).code).toBe(0)
        expect((yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })).body.total).toBe(2)
      }))

    it.effect("OTLP: malformed payloads are 400 and store nothing; other media types or encodings are 415; outsiders 403; unknown agents 404", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* registerHelper(team)
        const span = (extra: Record<string, unknown> = {}) => ({
          traceId: "0af7651916cd43dd8448eb211c80319c",
          spanId: "b7ad6b7169203331",
          name: "turn",
          startTimeUnixNano: "1762070400000000000",
          endTimeUnixNano: "1762070400012500000",
          ...extra
        })
        const body = (service: string, spans: ReadonlyArray<unknown>) => ({
          resourceSpans: [{
            resource: { attributes: [{ key: "service.name", value: { stringValue: service } }] },
            scopeSpans: [{ scope: { name: "x" }, spans }]
          }]
        })
        const service = `${team.account}/helper`
        const malformed = [
          body(service, [span({ traceId: "not-hex" })]),
          body(service, [span({ spanId: "123" })]),
          body(service, [span({ startTimeUnixNano: "-5" })]),
          body(service, [span({ startTimeUnixNano: undefined })]),
          body(service, [span({ status: { code: 7 } })]),
          body(service, [span({ attributes: [{ key: 3 }] })]),
          { resourceSpans: "nope" }
        ]
        for (const json of malformed) {
          const r = yield* raw("POST", "/otlp/v1/traces", { token: team.tokens.member, json })
          expect(r.status, JSON.stringify(json)).toBe(400)
          expectErrorBody(r.body, "invalid_request")
        }
        const notJson = yield* raw("POST", "/otlp/v1/traces", { token: team.tokens.member, text: "{ not json" })
        expect(notJson.status).toBe(400)
        const plain = yield* raw("POST", "/otlp/v1/traces", {
          token: team.tokens.member,
          text: "{}",
          headers: { "content-type": "text/plain" }
        })
        expect(plain.status).toBe(415)
        expectErrorBody(plain.body, "unsupported_media_type")
        const brotli = yield* raw("POST", "/otlp/v1/traces", {
          token: team.tokens.member,
          text: "{}",
          headers: { "content-type": "application/json", "content-encoding": "br" }
        })
        expect(brotli.status).toBe(415)
        expectErrorBody(brotli.body, "unsupported_media_type")
        expect((yield* raw("POST", "/otlp/v1/traces", { json: body(service, [span()]) })).status).toBe(401)
        const outsider = yield* raw("POST", "/otlp/v1/traces", { token: team.tokens.outsider, json: body(service, [span()]) })
        expect(outsider.status).toBe(403)
        expectErrorBody(outsider.body, "forbidden")
        const unknown = yield* raw("POST", "/otlp/v1/traces", { token: team.tokens.member, json: body(`${team.account}/ghost`, [span()]) })
        expect(unknown.status).toBe(404)
        const unnamed = yield* raw("POST", "/otlp/v1/traces", { token: team.tokens.member, json: body("helper", [span()]) })
        expect(unnamed.status).toBe(400)
        expect(unnamed.body.details).toContain("service.name")
        expect((yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })).body.total).toBe(0)

        // Partial success: the spans of the agent the caller may export are kept, the others counted as rejected.
        const mixed = {
          resourceSpans: [
            ...body(service, [span(), span({ spanId: "00f067aa0ba902b7", parentSpanId: "b7ad6b7169203331" })]).resourceSpans,
            ...body(`${team.account}/ghost`, [span({ traceId: "1af7651916cd43dd8448eb211c80319c" })]).resourceSpans
          ]
        }
        const partial = yield* raw("POST", "/otlp/v1/traces", { token: team.tokens.member, json: mixed })
        expect(partial.status).toBe(200)
        expect(partial.body.partialSuccess.rejectedSpans).toBe("1")
        expect(partial.body.partialSuccess.errorMessage).toContain("ghost")
        const page = yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })
        expect(page.body.traces).toEqual([{
          trace_id: "0af7651916cd43dd8448eb211c80319c",
          name: "turn",
          status: "ok",
          latency_ms: 12.5,
          input: "",
          output: "",
          timestamp: "2025-11-02T08:00:00.000Z",
          model: null,
          usage: null
        }])
        const empty = yield* raw("POST", "/otlp/v1/traces", { token: team.tokens.member, json: {} })
        expect([empty.status, empty.body]).toEqual([200, {}])
      }))

    it.effect("OTLP as sent: the real protobuf and JSON exporters, gzip-compressed or not, store the same traces", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* registerHelper(team)
        const wires: ReadonlyArray<Wire> = [
          { protocol: "protobuf", compression: "none" },
          { protocol: "protobuf", compression: "gzip" },
          { protocol: "json", compression: "none" },
          { protocol: "json", compression: "gzip" }
        ]
        const roots: Record<string, string> = {}
        for (const wire of wires) {
          const tag = `${wire.protocol}-${wire.compression}`
          const spans = yield* spansOf(`${team.account}/helper`, (tracer) => {
            agentTurn(tracer, `answer-${tag}`, false)
            agentTurn(tracer, `broken-${tag}`, true)
          })
          roots[tag] = spans.find((s) => s.name === `answer-${tag}`)!.spanContext().traceId
          const result = yield* exportSpans(team.tokens.member, spans, wire)
          expect([tag, result.code, result.error]).toEqual([tag, 0, undefined])
        }
        const page = yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })
        expect(page.body.total).toBe(8)
        const byName = Object.fromEntries(page.body.traces.map((t: any) => [t.name, t]))
        for (const wire of wires) {
          const tag = `${wire.protocol}-${wire.compression}`
          expect(byName[`answer-${tag}`], tag).toEqual({
            trace_id: roots[tag],
            name: `answer-${tag}`,
            status: "ok",
            latency_ms: 250,
            input: `question for answer-${tag}`,
            output: `answer of answer-${tag}`,
            timestamp: "2026-11-02T09:00:00.000Z",
            model: null,
            usage: null
          })
          expect(byName[`broken-${tag}`], tag).toMatchObject({ status: "error", output: `answer of broken-${tag}` })
        }
      }))

    it.effect("OTLP protobuf: the answer is a protobuf ExportTraceServiceResponse, with partial_success when spans are refused", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* registerHelper(team)
        const mine = yield* spansOf(`${team.account}/helper`, (tracer) => agentTurn(tracer, "kept", false))
        const ghost = yield* spansOf(`${team.account}/ghost`, (tracer) => agentTurn(tracer, "lost", false))
        const body = ProtobufTraceSerializer.serializeRequest([...mine, ...ghost])!
        for (const [encoding, bytes] of [["identity", body], ["gzip", gzipSync(body)]] as const) {
          const r = yield* rawBytes("/otlp/v1/traces", team.tokens.member, bytes, {
            "content-type": "application/x-protobuf",
            "content-encoding": encoding
          })
          expect([encoding, r.status, r.contentType]).toEqual([encoding, 200, "application/x-protobuf"])
          const answer = ProtobufTraceSerializer.deserializeResponse(r.bytes)
          expect(Number(answer.partialSuccess?.rejectedSpans)).toBe(2)
          expect(answer.partialSuccess?.errorMessage).toContain("ghost")
        }
        const everything = yield* rawBytes("/otlp/v1/traces", team.tokens.member, ProtobufTraceSerializer.serializeRequest(mine)!, {
          "content-type": "application/x-protobuf"
        })
        expect([everything.status, everything.bytes.length]).toEqual([200, 0])
        const page = yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })
        expect(page.body.traces.map((t: any) => t.name)).toEqual(["kept"])
        // A refusal of everything is an error in the export's encoding: a google.rpc.Status to protobuf, the JSON body to JSON.
        const refused = yield* rawBytes("/otlp/v1/traces", team.tokens.member, ProtobufTraceSerializer.serializeRequest(ghost)!, {
          "content-type": "application/x-protobuf"
        })
        expect([refused.status, refused.contentType]).toEqual([404, "application/x-protobuf"])
        expect(rpcStatusOf(refused.bytes)).toEqual({ code: 5, message: expect.stringMatching(/^agent_not_found: Agent .*ghost does not exist/) })
        const refusedJson = yield* raw("POST", "/otlp/v1/traces", {
          token: team.tokens.member,
          bytes: JsonTraceSerializer.serializeRequest(ghost)!,
          headers: { "content-type": "application/json" }
        })
        expect(refusedJson.status).toBe(404)
        expectErrorBody(refusedJson.body, "agent_not_found")
      }))

    it.effect("GET .../traces/{traceId}: the trace with its span tree (ids, parent, name, kind, status, times, attributes, events, GenAI facts), its model and token usage; 404 for a trace not seen", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* registerHelper(team)
        const start = Date.UTC(2026, 10, 2, 9, 0, 0)
        const spans = yield* spansOf(`${team.account}/helper`, (tracer) => {
          // The root adds up its children's usage, as agent frameworks do: it is not counted twice.
          const root = tracer.startSpan("turn", {
            startTime: start,
            kind: SpanKind.INTERNAL,
            attributes: { "input.value": "question", "gen_ai.usage.input_tokens": 15, "gen_ai.usage.output_tokens": 5 }
          })
          const inRoot = otelTrace.setSpan(context.active(), root)
          const llm = tracer.startSpan("llm", {
            startTime: start + 5,
            kind: SpanKind.CLIENT,
            attributes: {
              "gen_ai.operation.name": "chat",
              "gen_ai.request.model": "m-1",
              "gen_ai.usage.input_tokens": 12,
              "gen_ai.usage.output_tokens": 5,
              "gen_ai.input.messages": "[{\"role\":\"user\"}]",
              n: 3
            }
          }, inRoot)
          const inLlm = otelTrace.setSpan(context.active(), llm)
          tracer.startSpan("tokenize", { startTime: start + 6 }, inLlm).end(start + 7)
          llm.addEvent("retry", { attempt: 2 }, start + 10)
          llm.setStatus({ code: SpanStatusCode.ERROR, message: "rate limited" })
          llm.end(start + 200)
          // OpenInference's names are read too.
          tracer.startSpan("tool", { startTime: start + 210, attributes: { "llm.token_count.prompt": 3, "output.value": "done" } }, inRoot)
            .end(start + 240)
          root.end(start + 250)
        })
        expect((yield* exportSpans(team.tokens.member, spans, { protocol: "protobuf", compression: "gzip" })).code).toBe(0)
        const traceId = spans[0]!.spanContext().traceId
        const idOf = (name: string) => spans.find((s) => s.name === name)!.spanContext().spanId
        const detail = yield* raw("GET", `${tracesPath(team.account)}/${traceId}`, { token: team.tokens.admin })
        expect(detail.status).toBe(200)
        expect(detail.body).toMatchObject({
          trace_id: traceId,
          name: "turn",
          status: "ok",
          latency_ms: 250,
          input: "question",
          output: "done",
          model: "m-1",
          usage: { input_tokens: 15, output_tokens: 5 }
        })
        const shape = (node: any): unknown => [node.name, node.children.map(shape)]
        expect(detail.body.spans.map(shape)).toEqual([["turn", [["llm", [["tokenize", []]]], ["tool", []]]]])
        const [root] = detail.body.spans
        const llm = root.children[0]
        expect(root).toMatchObject({ span_id: idOf("turn"), parent_span_id: null, kind: "internal", status: "unset" })
        expect(llm).toEqual({
          span_id: idOf("llm"),
          parent_span_id: idOf("turn"),
          name: "llm",
          kind: "client",
          status: "error",
          status_message: "rate limited",
          start_time: "2026-11-02T09:00:00.005Z",
          end_time: "2026-11-02T09:00:00.200Z",
          duration_ms: 195,
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m-1",
            "gen_ai.usage.input_tokens": "12",
            "gen_ai.usage.output_tokens": "5",
            "gen_ai.input.messages": "[{\"role\":\"user\"}]",
            n: "3"
          },
          gen_ai: {
            operation: "chat",
            model: "m-1",
            input_tokens: 12,
            output_tokens: 5,
            input: "[{\"role\":\"user\"}]",
            output: null
          },
          events: [{ name: "retry", timestamp: "2026-11-02T09:00:00.010Z", attributes: { attempt: "2" } }],
          children: [expect.objectContaining({ name: "tokenize", parent_span_id: idOf("llm"), gen_ai: null })]
        })
        expect(root.children[1].gen_ai).toMatchObject({ input_tokens: 3, output_tokens: null, output: "done" })
        // The same readers as the listing; a trace the caller does not see is 404, like one that does not exist.
        expect((yield* raw("GET", `${tracesPath(team.account)}/${traceId}`, { token: team.tokens.outsider })).status).toBe(403)
        const missing = yield* raw("GET", `${tracesPath(team.account)}/0123456789abcdef0123456789abcdef`, { token: team.tokens.member })
        expect(missing.status).toBe(404)
        expectErrorBody(missing.body, "trace_not_found")
        expect((yield* raw("GET", `${tracesPath(team.account)}/not%20an%20id`, { token: team.tokens.member })).status).toBe(400)
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        expect((yield* send(team.tokens.member, deployment, conversation, { content: "private" })).status).toBe(200)
        yield* settledHistory(team.tokens.member, deployment, conversation)
        let turn: any
        for (let i = 0; i < 100 && turn === undefined; i++) {
          const page = yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })
          turn = page.body.traces.find((t: any) => t.name === "chat")
          if (turn === undefined) yield* Effect.sleep("20 millis")
        }
        const mine = yield* raw("GET", `${tracesPath(team.account)}/${turn.trace_id}`, { token: team.tokens.member })
        expect([mine.status, mine.body.input, mine.body.spans, mine.body.model, mine.body.usage]).toEqual([200, "private", [], null, null])
        expect((yield* raw("GET", `${tracesPath(team.account)}/${turn.trace_id}`, { token: team.tokens.owner })).status).toBe(404)
      }))

    it.effect("OTLP hostile input: protobuf garbage and broken gzip are 400, a gzip bomb is 413 with bounded memory (google.rpc.Status bodies to protobuf, {error, details} to JSON); nothing is stored", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* registerHelper(team)
        const post = (bytes: Uint8Array, headers: Record<string, string>) =>
          raw("POST", "/otlp/v1/traces", { token: team.tokens.member, bytes, headers })
        /** A protobuf export's error answer: its status, and the google.rpc.Status of its body. */
        const postProtobuf = (bytes: Uint8Array, headers: Record<string, string>) =>
          Effect.map(rawBytes("/otlp/v1/traces", team.tokens.member, bytes, headers), (r) => {
            expect(r.contentType).toBe("application/x-protobuf")
            return { status: r.status, rpc: rpcStatusOf(r.bytes) }
          })
        const protobuf = { "content-type": "application/x-protobuf" }
        const valid = ProtobufTraceSerializer.serializeRequest(
          yield* spansOf(`${team.account}/helper`, (tracer) => agentTurn(tracer, "never", false))
        )!
        const garbage = [
          new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff]),
          valid.slice(0, valid.length - 7),
          new TextEncoder().encode("{\"resourceSpans\": []}")
        ]
        for (const bytes of garbage) {
          const r = yield* postProtobuf(bytes, protobuf)
          expect(r.status).toBe(400)
          expect(r.rpc.code).toBe(3) // INVALID_ARGUMENT
          expect(r.rpc.message).toMatch(/^invalid_request: The request body is not a protobuf ExportTraceServiceRequest/)
        }
        const notGzip = yield* postProtobuf(valid, { ...protobuf, "content-encoding": "gzip" })
        expect([notGzip.status, notGzip.rpc.code]).toEqual([400, 3])
        expect(notGzip.rpc.message).toContain("not valid gzip")
        // 1 GiB of zeros in 128 gzip members of 8 MiB: about 1 MiB on the wire, under the 2 MiB body limit.
        const member = gzipSync(new Uint8Array(8 * 1024 * 1024))
        const bomb = new Uint8Array(member.length * 128)
        for (let i = 0; i < 128; i++) bomb.set(member, i * member.length)
        expect(bomb.length).toBeLessThan(2 * 1024 * 1024)
        const before = process.memoryUsage().rss
        const inProtobuf = yield* postProtobuf(bomb, { ...protobuf, "content-encoding": "gzip" })
        expect([inProtobuf.status, inProtobuf.rpc.code]).toEqual([413, 3])
        expect(inProtobuf.rpc.message).toMatch(/^payload_too_large: .*inflates/)
        const inJson = yield* post(bomb, { "content-type": "application/json", "content-encoding": "gzip" })
        expect(inJson.status).toBe(413)
        expectErrorBody(inJson.body, "payload_too_large")
        expect(inJson.body.details).toContain("inflates")
        // The other refusals of a protobuf export are google.rpc.Status too, with the code of their status.
        const unauthenticated = yield* Effect.flatMap(port, (p) =>
          Effect.promise(async () => {
            const r = await fetch(`http://127.0.0.1:${p}/api/v1/otlp/v1/traces`, { method: "POST", headers: protobuf, body: valid as Uint8Array<ArrayBuffer> })
            return { status: r.status, type: r.headers.get("content-type"), rpc: rpcStatusOf(new Uint8Array(await r.arrayBuffer())) }
          }))
        expect([unauthenticated.status, unauthenticated.type, unauthenticated.rpc.code]).toEqual([401, "application/x-protobuf", 16])
        const ghost = ProtobufTraceSerializer.serializeRequest(
          yield* spansOf(`${team.account}/ghost`, (tracer) => agentTurn(tracer, "ghost", false))
        )!
        const unknown = yield* postProtobuf(ghost, protobuf)
        expect([unknown.status, unknown.rpc.code]).toEqual([404, 5])
        const outsider = yield* Effect.map(
          rawBytes("/otlp/v1/traces", team.tokens.outsider, valid, protobuf),
          (r) => [r.status, r.contentType, rpcStatusOf(r.bytes).code]
        )
        expect(outsider).toEqual([403, "application/x-protobuf", 7])
        const large = yield* postProtobuf(new Uint8Array(3 * 1024 * 1024), protobuf)
        expect([large.status, large.rpc.code]).toEqual([413, 3])
        expect(process.memoryUsage().rss - before).toBeLessThan(256 * 1024 * 1024)
        expect((yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })).body.total).toBe(0)
        // Gzip-compressed JSON is read like plain JSON.
        const json = {
          resourceSpans: [{
            resource: { attributes: [{ key: "service.name", value: { stringValue: `${team.account}/helper` } }] },
            scopeSpans: [{
              spans: [{
                traceId: "5af7651916cd43dd8448eb211c80319c",
                spanId: "b7ad6b7169203331",
                name: "zipped",
                startTimeUnixNano: "1762070400000000000",
                endTimeUnixNano: "1762070400012500000"
              }]
            }]
          }]
        }
        const zipped = yield* post(gzipSync(JSON.stringify(json)), { "content-type": "application/json", "content-encoding": "gzip" })
        expect([zipped.status, zipped.body]).toEqual([200, {}])
        expect((yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })).body.traces.map((t: any) => t.name))
          .toEqual(["zipped"])
      }))
  })
})
