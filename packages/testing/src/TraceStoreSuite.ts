/**
 * The contract of the TraceStore's bounded queries (issue 30): keyset
 * cursors, the model filter and the summary of a trace's spans on its row,
 * the retention sweep, and the stats of a window, which every store computes
 * to the same answers. `StorageSuite.run` runs it beside the rest.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ids, Ports, Trace, TraceStats } from "@hosting/core"
import { DateTime, Effect, type Layer, Option } from "effect"
import * as TraceQueries from "./TraceQueries.js"

let counter = 0
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 6)}`

const at = (iso: string) => DateTime.unsafeMake(iso)

/** A fresh agent of a fresh account (the trace tables name accounts by id only). */
const newAgent = () => ({ publisher: Ids.AccountId.make(unique("acct")), agent: Ids.AgentName.make(unique("agent")) })

type Agent = ReturnType<typeof newAgent>

const traceOf = (a: Agent, id: string, iso: string, extra: Partial<Trace.TraceRecord> = {}) =>
  new Trace.TraceRecord({
    publisher_id: a.publisher,
    agent_name: a.agent,
    account_id: a.publisher,
    owner_id: Option.none(),
    trace_id: id,
    name: "turn",
    status: "ok",
    latency_ms: 10,
    input: "in",
    output: "out",
    timestamp: at(iso),
    ...extra
  })

const spanOf = (a: Agent, traceId: string, spanId: string, parent: string | null, iso: string, attributes: Record<string, string>) =>
  new Trace.SpanRecord({
    publisher_id: a.publisher,
    agent_name: a.agent,
    trace_id: traceId,
    span_id: spanId,
    parent_span_id: parent,
    name: spanId,
    kind: "internal",
    status: "unset",
    status_message: "",
    start_time: at(iso),
    end_time: at(iso),
    duration_ms: 0,
    attributes,
    events: []
  })

const query = (a: Agent, extra: Partial<Trace.TraceQuery> = {}) =>
  Effect.flatMap(Ports.TraceStore, (store) =>
    store.query(TraceQueries.of({ publisher_id: a.publisher, agent_name: a.agent, account_ids: [a.publisher], viewer: Ids.UserId.make("viewer"), ...extra })))

const ids = (page: { readonly traces: ReadonlyArray<Trace.TraceRecord> }) => page.traces.map((t) => t.trace_id)

/** Runs the contract against a layer providing every storage port. */
export const run = <E>(name: string, layer: Layer.Layer<Ports.StoragePorts, E>) => {
  describe(`trace queries: ${name}`, () => {
    it.layer(layer, { timeout: 30_000 })((it) => {
      it.effect("a cursor gives the traces after it, in the listing's order (ties by id), whatever arrives meanwhile", () =>
        Effect.gen(function*() {
          const store = yield* Ports.TraceStore
          const a = newAgent()
          // Two traces share each start: the id orders them.
          yield* store.append(Array.from({ length: 6 }, (_, i) => traceOf(a, `t-${i}`, `2026-11-01T10:0${Math.floor(i / 2)}:00.000Z`)))
          const first = yield* query(a, { limit: 2 })
          expect(ids(first)).toEqual(["t-5", "t-4"])
          const last = first.traces.at(-1)!
          // Newer traces arrive: the next page is the same.
          yield* store.append([traceOf(a, "t-new", "2026-11-01T11:00:00.000Z"), traceOf(a, "t-3b", "2026-11-01T10:01:00.000Z")])
          const next = yield* query(a, { limit: 2, after: Option.some({ timestamp: last.timestamp, trace_id: last.trace_id }) })
          expect(ids(next)).toEqual(["t-3b", "t-3"])
          expect(next.total).toBe(8)
          const rest = yield* query(a, { limit: 10, after: Option.some({ timestamp: at("2026-11-01T10:01:00.000Z"), trace_id: "t-3" }) })
          expect(ids(rest)).toEqual(["t-2", "t-1", "t-0"])
        }))

      it.effect("a reader of many accounts sees, of each, the traces without an owner and its own chats, in the listing's order, by offset and by cursor", () =>
        Effect.gen(function*() {
          const store = yield* Ports.TraceStore
          const a = newAgent()
          const viewer = Ids.UserId.make("viewer")
          // More accounts than the SQL store reads in one statement (100), the first given holding the oldest traces.
          const accounts = Array.from({ length: 150 }, (_, i) => Ids.AccountId.make(`${a.publisher}-${String(i).padStart(3, "0")}`))
          const time = (i: number, second: number) => `2026-11-01T${String(10 + Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}:0${second}.000Z`
          yield* store.append(accounts.flatMap((account, i) => [
            traceOf(a, `open-${i}`, time(i, 2), { account_id: account }),
            traceOf(a, `mine-${i}`, time(i, 1), { account_id: account, owner_id: Option.some(viewer) }),
            traceOf(a, `theirs-${i}`, time(i, 3), { account_id: account, owner_id: Option.some(Ids.UserId.make("someone-else")) })
          ]))
          // Another account's traces stay hidden too.
          yield* store.append([traceOf(a, "elsewhere", "2026-11-01T09:00:00.000Z", { account_id: Ids.AccountId.make(unique("acct")) })])
          const expected = Array.from({ length: 150 }, (_, i) => [`open-${149 - i}`, `mine-${149 - i}`]).flat()
          const given = { account_ids: [...accounts, accounts[0]!], viewer }
          const first = yield* query(a, { ...given, limit: 120 })
          expect(ids(first)).toEqual(expected.slice(0, 120))
          expect(first.total).toBe(300)
          expect(ids(yield* query(a, { ...given, limit: 50, offset: 110 }))).toEqual(expected.slice(110, 160))
          const last = first.traces.at(-1)!
          const next = yield* query(a, { ...given, limit: 500, after: Option.some({ timestamp: last.timestamp, trace_id: last.trace_id }) })
          expect(ids(next)).toEqual(expected.slice(120))
        }))

      it.effect("a trace's row keeps the model and usage of its spans, whichever comes first; the model filters the listing", () =>
        Effect.gen(function*() {
          const store = yield* Ports.TraceStore
          const a = newAgent()
          const llm = (model: string, input: string, output: string) => ({
            "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": input,
            "gen_ai.usage.output_tokens": output
          })
          // Spans before their trace (an agent's spans of a chat turn, exported before the turn is stored).
          yield* store.appendSpans([spanOf(a, "t-early", "s-1", "turn", "2026-11-01T10:00:00.000Z", llm("m-1", "12", "5"))])
          yield* store.append([traceOf(a, "t-early", "2026-11-01T10:00:00.000Z"), traceOf(a, "t-plain", "2026-11-01T09:00:00.000Z")])
          // A trace first, then its spans, in two exports.
          yield* store.append([traceOf(a, "t-late", "2026-11-01T11:00:00.000Z")])
          yield* store.appendSpans([
            spanOf(a, "t-late", "root", null, "2026-11-01T11:00:00.000Z", {}),
            spanOf(a, "t-late", "c-1", "root", "2026-11-01T11:00:01.000Z", llm("m-2", "3", "4"))
          ])
          yield* store.appendSpans([spanOf(a, "t-late", "c-2", "root", "2026-11-01T11:00:02.000Z", llm("m-1", "10", "20"))])
          // The trace stored again (an exporter's retry) keeps its summary.
          yield* store.append([traceOf(a, "t-late", "2026-11-01T11:00:00.000Z", { output: "again" })])
          const page = yield* query(a)
          expect(page.traces.map((t) => [t.trace_id, t.model, t.usage])).toEqual([
            ["t-late", "m-2", { input_tokens: 13, output_tokens: 24 }],
            ["t-early", "m-1", { input_tokens: 12, output_tokens: 5 }],
            ["t-plain", null, null]
          ])
          const m1 = yield* query(a, { model: Option.some("m-1") })
          expect([m1.total, ids(m1)]).toEqual([1, ["t-early"]])
          expect(ids(yield* query(a, { model: Option.some("m-2") }))).toEqual(["t-late"])
          expect((yield* query(a, { model: Option.some("m-3") })).total).toBe(0)
        }))

      it.effect("the sweep deletes traces that started before a time with their spans, and old spans of no trace, in bounded batches", () =>
        Effect.gen(function*() {
          const store = yield* Ports.TraceStore
          const a = newAgent()
          yield* store.append(Array.from({ length: 5 }, (_, i) => traceOf(a, `old-${i}`, `2000-01-01T00:00:0${i}.000Z`)))
          yield* store.append([traceOf(a, "kept", "2100-01-01T00:00:00.000Z")])
          yield* store.appendSpans([
            spanOf(a, "old-0", "s", null, "2000-01-01T00:00:00.000Z", {}),
            spanOf(a, "kept", "s", null, "2100-01-01T00:00:00.000Z", {}),
            spanOf(a, "orphan", "s", "gone", "2000-01-01T00:00:00.000Z", {})
          ])
          const cutoff = at("2001-01-01T00:00:00.000Z")
          // Other tests' traces share the database: the sweep takes the oldest first, ours among them.
          let swept = 0
          for (let i = 0; i < 1000; i++) {
            const now = yield* store.sweep(cutoff, 2)
            expect(now).toBeLessThanOrEqual(4)
            swept += now
            if (now === 0) break
          }
          expect(swept).toBeGreaterThanOrEqual(6)
          expect(ids(yield* query(a))).toEqual(["kept"])
          const lookup = (traceId: string) =>
            store.find({ publisher_id: a.publisher, agent_name: a.agent, trace_id: traceId, account_ids: [a.publisher], viewer: Ids.UserId.make("v") })
          expect(Option.getOrThrow(yield* lookup("kept")).spans.length).toBe(1)
          // The spans of a swept trace are gone with it: stored again, the trace has none.
          yield* store.append([traceOf(a, "old-0", "2000-01-01T00:00:00.000Z"), traceOf(a, "orphan", "2000-01-01T00:00:00.000Z")])
          expect(Option.getOrThrow(yield* lookup("old-0")).spans).toEqual([])
          expect(Option.getOrThrow(yield* lookup("orphan")).spans).toEqual([])
        }))

      it.effect("stats: count, errors and nearest-rank p50 and p95 of latency per bucket, over the traces the viewer sees", () =>
        Effect.gen(function*() {
          const store = yield* Ports.TraceStore
          const a = newAgent()
          const other = Ids.AccountId.make(unique("acct"))
          const latencies = [5, 1, 4, 2, 3, 100, 7.5, 6, 9, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]
          yield* store.append([
            // Bucket 0 (10:00 to 10:10): 21 traces, 3 errors.
            ...latencies.map((latency_ms, i) =>
              traceOf(a, `b0-${i}`, `2026-11-01T10:0${i % 10}:00.000Z`, { latency_ms, status: i % 7 === 0 ? "error" : "ok" })),
            // Bucket 2 (10:20 to 10:30): one trace, at the window's last instant (both ends are in).
            traceOf(a, "b2", "2026-11-01T10:29:59.999Z", { latency_ms: 42.25, status: "error" }),
            // Not seen: another account's, another owner's, and one past the window.
            traceOf(a, "theirs", "2026-11-01T10:01:00.000Z", { account_id: other, latency_ms: 1000 }),
            traceOf(a, "owned", "2026-11-01T10:01:00.000Z", { owner_id: Option.some(Ids.UserId.make("alice")), latency_ms: 1000 }),
            traceOf(a, "after", "2026-11-01T10:30:00.000Z", { latency_ms: 1000 })
          ])
          const { bounds, width } = TraceStats.boundsOf(at("2026-11-01T10:00:00.000Z"), at("2026-11-01T10:29:59.999Z"), 3)
          expect(width).toBe(600_000)
          const figures = yield* store.stats({
            publisher_id: a.publisher,
            agent_name: a.agent,
            account_ids: [a.publisher],
            viewer: Ids.UserId.make("viewer"),
            bounds
          })
          const sorted = [...latencies].sort((x, y) => x - y)
          expect(figures).toEqual([
            { count: 21, errors: 3, p50_ms: sorted[10], p95_ms: sorted[19] },
            { count: 0, errors: 0, p50_ms: null, p95_ms: null },
            { count: 1, errors: 1, p50_ms: 42.25, p95_ms: 42.25 }
          ])
          expect(TraceStats.figuresOf(latencies.map((latency_ms) => ({ latency_ms, status: "ok" }))).p95_ms).toBe(sorted[19])
          const none = yield* store.stats({ publisher_id: a.publisher, agent_name: a.agent, account_ids: [], viewer: Ids.UserId.make("v"), bounds })
          expect(none.map((f) => f.count)).toEqual([0, 0, 0])
        }))
    })
  })
}
