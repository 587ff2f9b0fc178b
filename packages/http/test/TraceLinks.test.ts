/**
 * Chat turns linked to their traces (issue 30): the reply names its turn's
 * trace (history, `message.completed`), the agent runtime is handed a W3C
 * `traceparent` of that trace, and the spans an agent exports with it are
 * shown under the turn's trace.
 */
import { context, trace as otelTrace, TraceFlags } from "@opentelemetry/api"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace"
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { AgentRuntime } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { Effect, Layer } from "effect"
import { deployedAgent, newConversationId, replies, send, settledHistory } from "./ChatHelpers.js"
import { layer, port, raw } from "./HttpTestServer.js"

/** The `traceparent` each turn handed to the agent runtime, in order. */
const received: Array<string | undefined> = []

/** An agent that answers "linked" and records the turn's traceparent, as the HTTP runtime would send it. */
const recordingAgent = Layer.succeed(AgentRuntime.AgentRuntime, {
  reply: (turn, emit) =>
    Effect.sync(() => {
      received.push(turn.traceparent)
      emit("linked")
    })
})

/**
 * The spans an instrumented agent makes for a turn whose request carried
 * `traceparent`, continued as the W3C propagator does: its outermost span's
 * parent is the turn's span.
 */
const agentSpansFor = (service: string, traceparent: string) =>
  Effect.promise(async () => {
    const memory = new InMemorySpanExporter()
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ "service.name": service }),
      spanProcessors: [new SimpleSpanProcessor({ exporter: memory })]
    })
    const tracer = provider.getTracer("agent")
    const [, traceId, spanId] = traceparent.split("-")
    const carried = otelTrace.setSpanContext(context.active(), {
      traceId: traceId!,
      spanId: spanId!,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true
    })
    const handle = tracer.startSpan("handle turn", { attributes: { "input.value": "question" } }, carried)
    const llm = tracer.startSpan("llm", {
      attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "m-1", "gen_ai.usage.input_tokens": 7 }
    }, otelTrace.setSpan(carried, handle))
    llm.end()
    handle.end()
    await provider.forceFlush()
    const spans: ReadonlyArray<ReadableSpan> = memory.getFinishedSpans()
    await provider.shutdown()
    return spans
  })

/** Exports spans with the real OTLP/HTTP protobuf exporter; resolves with the export's result code. */
const exportSpans = (token: string, spans: ReadonlyArray<ReadableSpan>) =>
  Effect.flatMap(port, (p) =>
    Effect.promise(() => {
      const exporter = new OTLPTraceExporter({
        url: `http://127.0.0.1:${p}/api/v1/otlp/v1/traces`,
        headers: { Authorization: `Bearer ${token}` }
      })
      return new Promise<number>((resolve) => exporter.export([...spans], (result) => resolve(result.code)))
        .finally(() => exporter.shutdown())
    }))

/** Reads a trace until `done` holds of the answer (traces are written with the next flush), for two seconds at most. */
const traceUntil = (path: string, token: string, done: (r: { status: number; body: any }) => boolean) =>
  Effect.gen(function*() {
    let answer = yield* raw("GET", path, { token })
    for (let i = 0; i < 100 && !done(answer); i++) {
      yield* Effect.sleep("20 millis")
      answer = yield* raw("GET", path, { token })
    }
    return answer
  })

describe("HTTP: chat turns linked to traces", () => {
  withLayer(layer({ agentLayer: recordingAgent }), { excludeTestServices: true })((it) => {
    it.effect("a reply carries its turn's trace id (history, message.completed), the agent gets its traceparent, and its spans land in that trace", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        received.length = 0
        expect((yield* send(team.tokens.member, deployment, conversation, { content: "question" })).status).toBe(200)
        const messages = yield* settledHistory(team.tokens.member, deployment, conversation)
        const [user, reply] = messages
        expect(user.trace_id).toBeNull()
        expect(reply).toMatchObject({ role: "assistant", content: "linked", status: "complete" })
        expect(reply.trace_id).toMatch(/^[0-9a-f]{32}$/)

        // The agent was sent a W3C traceparent of the same trace.
        expect(received).toHaveLength(1)
        const traceparent = received[0]!
        expect(traceparent).toMatch(new RegExp(`^00-${reply.trace_id}-(?!0{16})[0-9a-f]{16}-01$`))

        // The reply stream, opened after the end, replays message.completed with the trace id.
        const stream = yield* replies(team.tokens.member, deployment, conversation)
        const events = yield* Effect.promise(() => stream.next(2))
        stream.close()
        expect(events.map((e) => e.event)).toEqual(["message.delta", "message.completed"])
        expect(events[1]!.data).toEqual({ message_id: reply.message_id, content: "linked", trace_id: reply.trace_id })

        // The turn's trace, under the id the history names; no spans until the agent exports some.
        const path = `/agents/${team.account}/helper/observability/traces/${reply.trace_id}`
        const before = yield* traceUntil(path, team.tokens.member, (r) => r.status === 200)
        expect(before.body).toMatchObject({ trace_id: reply.trace_id, name: "chat", input: "question", output: "linked", spans: [] })

        // The agent exports the spans it made under that traceparent (as a member of the agent's account).
        const spans = yield* agentSpansFor(`${team.account}/helper`, traceparent)
        expect(spans.every((s) => s.spanContext().traceId === reply.trace_id)).toBe(true)
        expect(yield* exportSpans(team.tokens.owner, spans)).toBe(0)
        const after = yield* traceUntil(path, team.tokens.member, (r) => r.body.spans?.length > 0)
        expect(after.body).toMatchObject({ trace_id: reply.trace_id, name: "chat", input: "question", output: "linked", model: "m-1" })
        const [handle] = after.body.spans
        expect(handle).toMatchObject({ name: "handle turn", parent_span_id: traceparent.split("-")[2] })
        expect(handle.children.map((s: any) => s.name)).toEqual(["llm"])

        // A root span in the turn's trace (an agent that does not continue the traceparent) does not take the turn's record over.
        const now = BigInt(Date.now()) * 1_000_000n
        const takeover = yield* raw("POST", "/otlp/v1/traces", {
          token: team.tokens.owner,
          json: {
            resourceSpans: [{
              resource: { attributes: [{ key: "service.name", value: { stringValue: `${team.account}/helper` } }] },
              scopeSpans: [{
                spans: [{
                  traceId: reply.trace_id,
                  spanId: "00f067aa0ba902b7",
                  name: "takeover",
                  kind: 1,
                  startTimeUnixNano: String(now),
                  endTimeUnixNano: String(now + 1_000_000n),
                  attributes: [{ key: "input.value", value: { stringValue: "replaced" } }]
                }]
              }]
            }]
          }
        })
        expect(takeover.status).toBe(200)
        const kept = yield* raw("GET", path, { token: team.tokens.member })
        expect(kept.body).toMatchObject({ name: "chat", input: "question", output: "linked" })

        // The turn's trace stays the conversation owner's: the agent's export did not make it a trace of its own.
        const list = yield* raw("GET", `/agents/${team.account}/helper/observability/traces`, { token: team.tokens.owner })
        expect(list.body.traces.map((t: any) => t.trace_id)).not.toContain(reply.trace_id)
        expect((yield* raw("GET", path, { token: team.tokens.owner })).status).toBe(404)
      }))

    it.effect("each turn has its own trace; the agent of each is sent that trace", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        received.length = 0
        for (const content of ["one", "two"]) {
          expect((yield* send(team.tokens.member, deployment, conversation, { content })).status).toBe(200)
          yield* settledHistory(team.tokens.member, deployment, conversation)
        }
        const messages = yield* settledHistory(team.tokens.member, deployment, conversation)
        const traces = messages.filter((m) => m.role === "assistant").map((m) => m.trace_id)
        expect(new Set(traces).size).toBe(2)
        expect(received.map((t) => t?.split("-")[1])).toEqual(traces)
      }))
  })

  withLayer(layer({ agentLayer: recordingAgent, traces: false }), { excludeTestServices: true })((it) => {
    it.effect("with traces off, a reply names no trace and the agent is sent none", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        received.length = 0
        expect((yield* send(team.tokens.member, deployment, conversation, { content: "question" })).status).toBe(200)
        const messages = yield* settledHistory(team.tokens.member, deployment, conversation)
        expect(messages.map((m) => m.trace_id)).toEqual([null, null])
        expect(received).toEqual([undefined])
      }))
  })
})
