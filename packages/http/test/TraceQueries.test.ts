/**
 * The traces listing's bounded queries over HTTP (issue 30): `cursor` and
 * `next_cursor`, the `model` filter and the token usage of each row, and
 * the stats route (p50, p95 and error rate per bucket), with hostile input.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Ids, Ports, Trace } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { DateTime, Effect, Option } from "effect"
import { expectErrorBody, layer, raw } from "./HttpTestServer.js"

const tracesPath = (account: string) => `/agents/${account}/helper/observability/traces`

/** Stores `count` traces of the team's `helper`, one a minute from 2026-11-01T00:00Z, with `extra` of each. */
const seed = (team: Seed.Team, count: number, extra: (i: number) => Partial<Trace.TraceRecord> = () => ({})) =>
  Effect.gen(function*() {
    const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(team.account))
    const traces = Array.from({ length: count }, (_, i) =>
      new Trace.TraceRecord({
        publisher_id: account.id,
        agent_name: Ids.AgentName.make("helper"),
        account_id: account.id,
        owner_id: Option.none(),
        trace_id: `t-${String(i).padStart(3, "0")}`,
        name: "turn",
        status: "ok",
        latency_ms: i + 1,
        input: "in",
        output: "out",
        timestamp: DateTime.unsafeMake(Date.UTC(2026, 10, 1, 0, i)),
        ...extra(i)
      }))
    yield* (yield* Ports.TraceStore).append(traces)
    return account
  })

const ids = (body: { traces: ReadonlyArray<{ trace_id: string }> }) => body.traces.map((t) => t.trace_id)

describe("HTTP: traces, bounded queries", () => {
  withLayer(layer(), { excludeTestServices: true })((it) => {
    it.effect("next_cursor pages through every trace once, newest first, while new traces arrive; null on the last page", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const account = yield* seed(team, 7)
        const first = yield* raw("GET", `${tracesPath(team.account)}?limit=3`, { token: team.tokens.member })
        expect([first.status, ids(first.body), first.body.total]).toEqual([200, ["t-006", "t-005", "t-004"], 7])
        expect(first.body.next_cursor).toMatch(/^[A-Za-z0-9._-]+$/)
        // A newer trace arrives between pages: it does not shift them.
        yield* (yield* Ports.TraceStore).append([new Trace.TraceRecord({
          publisher_id: account.id,
          agent_name: Ids.AgentName.make("helper"),
          account_id: account.id,
          owner_id: Option.none(),
          trace_id: "t-new",
          name: "turn",
          status: "ok",
          latency_ms: 1,
          input: "",
          output: "",
          timestamp: DateTime.unsafeMake(Date.UTC(2026, 10, 2))
        })])
        const seen = [...ids(first.body)]
        let cursor: string | null = first.body.next_cursor
        for (let i = 0; i < 10 && cursor !== null; i++) {
          const page = yield* raw("GET", `${tracesPath(team.account)}?limit=3&cursor=${cursor}`, { token: team.tokens.member })
          expect(page.status).toBe(200)
          seen.push(...ids(page.body))
          cursor = page.body.next_cursor
        }
        expect(seen).toEqual(["t-006", "t-005", "t-004", "t-003", "t-002", "t-001", "t-000"])
        // A page that ends exactly at the last trace says so.
        const exact = yield* raw("GET", `${tracesPath(team.account)}?limit=8`, { token: team.tokens.member })
        expect([exact.body.traces.length, exact.body.next_cursor]).toEqual([8, null])
        // Offset paging gives a cursor too.
        const byOffset = yield* raw("GET", `${tracesPath(team.account)}?limit=2&offset=1`, { token: team.tokens.member })
        const after = yield* raw("GET", `${tracesPath(team.account)}?limit=2&cursor=${byOffset.body.next_cursor}`, { token: team.tokens.member })
        expect(ids(after.body)).toEqual(["t-004", "t-003"])
      }))

    it.effect("model filters the listing and each row carries its model and token usage", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const account = yield* seed(team, 3)
        const span = (traceId: string, model: string, input: number, output: number) =>
          new Trace.SpanRecord({
            publisher_id: account.id,
            agent_name: Ids.AgentName.make("helper"),
            trace_id: traceId,
            span_id: "00f067aa0ba902b7",
            parent_span_id: null,
            name: "llm",
            kind: "client",
            status: "ok",
            status_message: "",
            start_time: DateTime.unsafeMake(Date.UTC(2026, 10, 1)),
            end_time: DateTime.unsafeMake(Date.UTC(2026, 10, 1)),
            duration_ms: 0,
            attributes: {
              "gen_ai.request.model": model,
              "gen_ai.usage.input_tokens": String(input),
              "gen_ai.usage.output_tokens": String(output)
            },
            events: []
          })
        yield* (yield* Ports.TraceStore).appendSpans([span("t-000", "gpt-x", 10, 2), span("t-002", "claude y", 7, 9)])
        const all = yield* raw("GET", tracesPath(team.account), { token: team.tokens.member })
        expect(all.body.traces.map((t: any) => [t.trace_id, t.model, t.usage])).toEqual([
          ["t-002", "claude y", { input_tokens: 7, output_tokens: 9 }],
          ["t-001", null, null],
          ["t-000", "gpt-x", { input_tokens: 10, output_tokens: 2 }]
        ])
        const one = yield* raw("GET", `${tracesPath(team.account)}?model=${encodeURIComponent("claude y")}`, { token: team.tokens.member })
        expect([one.body.total, ids(one.body)]).toEqual([1, ["t-002"]])
        const none = yield* raw("GET", `${tracesPath(team.account)}?model=unknown`, { token: team.tokens.member })
        expect([none.status, none.body.total, none.body.next_cursor]).toEqual([200, 0, null])
      }))

    it.effect("hostile listing parameters are 400 with {error, details}: forged, garbled or oversized cursors, a cursor with an offset, an empty or huge model", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* seed(team, 3)
        const page = yield* raw("GET", `${tracesPath(team.account)}?limit=1`, { token: team.tokens.member })
        const forged = `t1.${Buffer.from("not a cursor").toString("base64url")}`
        for (
          const query of [
            "cursor=",
            "cursor=garbage",
            `cursor=${forged}`,
            `cursor=t1.${Buffer.from("1:bad id!").toString("base64url")}`,
            `cursor=${"A".repeat(201)}`,
            "cursor=%00",
            `cursor=${page.body.next_cursor}&offset=1`,
            "model=",
            `model=${"m".repeat(257)}`
          ]
        ) {
          const answer = yield* raw("GET", `${tracesPath(team.account)}?${query}`, { token: team.tokens.member })
          expect([query.slice(0, 40), answer.status]).toEqual([query.slice(0, 40), 400])
          expectErrorBody(answer.body, "invalid_request")
          expect(answer.body.details).toMatch(/cursor|offset|model/)
        }
      }))

    it.effect("stats: p50, p95 and error rate per bucket over the window, of the traces the caller may list", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        // Minutes 0..9 in the first half hour: latencies 1..10, every third an error; minute 59 alone in the last bucket.
        yield* seed(team, 10, (i) => ({ status: i % 3 === 0 ? "error" : "ok" }))
        const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(team.account))
        yield* (yield* Ports.TraceStore).append([new Trace.TraceRecord({
          publisher_id: account.id,
          agent_name: Ids.AgentName.make("helper"),
          account_id: account.id,
          owner_id: Option.some(Ids.UserId.make("someone-else")),
          trace_id: "not-mine",
          name: "chat",
          status: "error",
          latency_ms: 5000,
          input: "",
          output: "",
          timestamp: DateTime.unsafeMake(Date.UTC(2026, 10, 1, 0, 59))
        })])
        const answer = yield* raw(
          "GET",
          `${tracesPath(team.account)}/stats?start_time=2026-11-01T00:00:00Z&end_time=2026-11-01T00:59:59.999Z&buckets=2`,
          { token: team.tokens.member }
        )
        expect(answer.status).toBe(200)
        expect(answer.body).toEqual({
          start_time: "2026-11-01T00:00:00.000Z",
          end_time: "2026-11-01T00:59:59.999Z",
          bucket_ms: 1_800_000,
          buckets: [
            {
              start: "2026-11-01T00:00:00.000Z",
              end: "2026-11-01T00:30:00.000Z",
              count: 10,
              errors: 4,
              error_rate: 0.4,
              p50_ms: 5,
              p95_ms: 10
            },
            { start: "2026-11-01T00:30:00.000Z", end: "2026-11-01T01:00:00.000Z", count: 0, errors: 0, error_rate: null, p50_ms: null, p95_ms: null }
          ]
        })
        // The default is 24 buckets.
        const day = yield* raw("GET", `${tracesPath(team.account)}/stats?start_time=2026-11-01T00:00:00Z&end_time=2026-11-01T23:59:59.999Z`, {
          token: team.tokens.member
        })
        expect([day.body.buckets.length, day.body.bucket_ms, day.body.buckets[0].count]).toEqual([24, 3_600_000, 10])
        // Outsiders are refused as for the listing.
        expect((yield* raw("GET", `${tracesPath(team.account)}/stats?start_time=2026-11-01T00:00:00Z&end_time=2026-11-02T00:00:00Z`, {
          token: team.tokens.outsider
        })).status).toBe(403)
      }))

    it.effect("stats refuses a window or buckets that are not ones with 400 {error, details}", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const window = "start_time=2026-11-01T00:00:00Z&end_time=2026-11-02T00:00:00Z"
        for (
          const query of [
            "",
            "start_time=2026-11-01T00:00:00Z",
            "end_time=2026-11-01T00:00:00Z",
            "start_time=2026-11-02T00:00:00Z&end_time=2026-11-01T00:00:00Z",
            "start_time=yesterday&end_time=2026-11-01T00:00:00Z",
            `${window}&buckets=0`,
            `${window}&buckets=201`,
            `${window}&buckets=-1`,
            `${window}&buckets=1e3`,
            `${window}&buckets=${"9".repeat(40)}`
          ]
        ) {
          const answer = yield* raw("GET", `${tracesPath(team.account)}/stats?${query}`, { token: team.tokens.member })
          expect([query, answer.status]).toEqual([query, 400])
          expectErrorBody(answer.body, "invalid_request")
        }
      }))
  })
})
