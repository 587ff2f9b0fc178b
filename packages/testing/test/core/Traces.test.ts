/**
 * Traces in the core: a trace per agent turn whatever its end (completed,
 * failed, cancelled), the text limit, and how OTLP spans become traces.
 */
import { describe, expect, it, layer as withLayer } from "@effect/vitest"
import { Chat, Conversation, Ids, Otlp, Ports, Trace } from "@hosting/core"
import { Seed, TestServices, TraceQueries } from "@hosting/testing"
import { DateTime, Effect, Option } from "effect"


/** Waits until the agent has `count` traces that `viewer` may see; gives them newest first. */
const tracesOf = (accountId: Ids.AccountId, viewer: Ids.UserId, count: number) =>
  Effect.gen(function*() {
    const store = yield* Ports.TraceStore
    for (let i = 0; i < 500; i++) {
      const page = yield* store.query(
        TraceQueries.of({ publisher_id: accountId, agent_name: Ids.AgentName.make("helper"), account_ids: [accountId], viewer })
      )
      if (page.total >= count) return page.traces
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    throw new Error(`fewer than ${count} traces were recorded`)
  })

describe("traces of chat turns", () => {
  withLayer(TestServices.make({ echo: { failOn: "boom", delay: "5 millis" } }), { excludeTestServices: true })((it) => {
    it.effect("a failed turn is an error trace with what arrived; a cancelled one is ok; long text is cut to the limit", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const { accountId, id } = yield* Seed.deployment(team)
        const chat = yield* Chat.Chat
        const failing = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
        yield* chat.send(team.principals.member, id, failing, { content: "one two boom three" })
        const member = team.principals.member.user.id
        const [failed] = yield* tracesOf(accountId, member, 1)
        expect(failed!.owner_id).toEqual(Option.some(member))
        expect([failed!.name, failed!.status, failed!.input, failed!.output]).toEqual(["chat", "error", "one two boom three", "one two "])

        const long = `${"word ".repeat(2000)}end`
        const cancelled = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
        yield* chat.send(team.principals.member, id, cancelled, { content: long })
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 30)))
        expect((yield* chat.cancel(team.principals.member, id, cancelled)).status).toBe("cancelled")
        const [latest] = yield* tracesOf(accountId, member, 2)
        expect(latest!.status).toBe("ok")
        expect(latest!.input.length).toBe(Trace.maxTextLength)
        expect(latest!.input.endsWith("…")).toBe(true)
        expect(long.startsWith(latest!.input.slice(0, -1))).toBe(true)
      }))
  })
})

describe("OTLP spans to traces", () => {
  const span = (traceId: string, spanId: string, extra: Partial<Otlp.Span> = {}): Otlp.Span => ({
    traceId,
    spanId,
    startTimeUnixNano: "1762070400000000000",
    endTimeUnixNano: "1762070400100000000",
    name: spanId,
    ...extra
  })
  const a = "a".repeat(32)
  const b = "b".repeat(32)

  it("the earliest root span of each trace is the trace; input and output fall back to the earliest span carrying them", () => {
    const traces = Otlp.tracesOf({
      scopeSpans: [
        { spans: [span(a, "1".repeat(16), { name: "root", attributes: [{ key: "input.value", value: { stringValue: "q" } }] })] },
        {
          spans: [
            span(a, "2".repeat(16), {
              parentSpanId: "1".repeat(16),
              startTimeUnixNano: "1762070400050000000",
              attributes: [{ key: "gen_ai.completion", value: { stringValue: "late" } }]
            }),
            span(a, "3".repeat(16), {
              parentSpanId: "1".repeat(16),
              startTimeUnixNano: "1762070400010000000",
              attributes: [
                { key: "gen_ai.prompt", value: { stringValue: "ignored: the root has input" } },
                { key: "output.value", value: { kvlistValue: { values: [{ key: "n", value: { intValue: "7" } }] } } }
              ]
            }),
            // A trace whose root is not in this export gives nothing.
            span(b, "4".repeat(16), { parentSpanId: "5".repeat(16) })
          ]
        }
      ]
    })
    expect(traces).toEqual([{
      trace_id: a,
      name: "root",
      status: "ok",
      latency_ms: 100,
      input: "q",
      output: "{\"n\":\"7\"}",
      timestamp: DateTime.unsafeMake("2025-11-02T08:00:00.000Z")
    }])
  })

  it("span status ERROR (by number or by name) is an error trace; UNSET and OK are ok; an end before the start is 0 ms", () => {
    const statuses = ([2, "STATUS_CODE_ERROR", 1, 0, undefined] as const).map((code, i) =>
      Otlp.tracesOf({
        scopeSpans: [{
          spans: [span(String(i).repeat(32), "1".repeat(16), {
            ...(code === undefined ? {} : { status: { code } }),
            endTimeUnixNano: "1762070300000000000"
          })]
        }]
      })[0]!)
    expect(statuses.map((t) => t.status)).toEqual(["error", "error", "ok", "ok", "ok"])
    expect(statuses[0]!.latency_ms).toBe(0)
  })
})
