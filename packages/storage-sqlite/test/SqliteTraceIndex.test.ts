/**
 * Every query of the traces listing is served by an index (migrations
 * 0004, 0017 and 0024): SQLite's plan for the stats of a window searches
 * the agent's index of times instead of scanning the table, and the count
 * and a page, with any filter (time, status, model) and after a cursor,
 * read each key of the traces the reader sees from the index of traces
 * without an owner or from that of owned ones.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Ids, Trace, TraceStats } from "@hosting/core"
import { SqlTraceStore } from "@hosting/storage-sql"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { DateTime, Effect, Option } from "effect"

const base: Trace.TraceQuery = {
  publisher_id: Ids.AccountId.make("acct-1"),
  agent_name: Ids.AgentName.make("helper"),
  account_ids: [Ids.AccountId.make("acct-1"), Ids.AccountId.make("acct-2")],
  viewer: Ids.UserId.make("user-1"),
  start: Option.some(DateTime.unsafeMake("2026-11-01T00:00:00Z")),
  end: Option.some(DateTime.unsafeMake("2026-11-02T00:00:00Z")),
  status: Option.none(),
  model: Option.none(),
  after: Option.none(),
  limit: 50,
  offset: 100
}

describe("sqlite: traces indexes", () => {
  it.layer(SqliteStorage.layer({ filename: ":memory:" }))((it) => {
    const planOf = (statement: { compile: () => readonly [string, ReadonlyArray<unknown>] }) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [text, params] = statement.compile()
        const plan = yield* sql.unsafe<{ readonly detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)
        return plan.map((row) => row.detail).join("\n")
      })

    it.effect("the count and each page of every filter read each key the reader sees from the indexes of unowned and owned traces, never the agent's others (migration 0024)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const shapes: ReadonlyArray<readonly [string, Trace.TraceQuery]> = [
          ["time", base],
          ["no window", { ...base, start: Option.none(), end: Option.none() }],
          ["status", { ...base, status: Option.some("error") }],
          ["model", { ...base, model: Option.some("m-1") }],
          ["cursor", { ...base, offset: 0, after: Option.some({ timestamp: DateTime.unsafeMake("2026-11-01T12:00:00Z"), trace_id: "t-1" }) }]
        ]
        for (const [name, query] of shapes) {
          for (const statement of [SqlTraceStore.countStatement(sql, query), SqlTraceStore.pageStatement(sql, query)]) {
            // Two accounts, and of each the traces without an owner and the reader's own: four keys, each its own range.
            const plan = yield* planOf(statement)
            const unowned = plan.match(/SEARCH traces USING (COVERING )?INDEX traces_unowned \(publisher_id=\? AND agent_name=\? AND account_id=\?/g)
            const owned = plan.match(
              /SEARCH traces USING (COVERING )?INDEX traces_owned \(publisher_id=\? AND agent_name=\? AND account_id=\? AND owner_id=\?/g
            )
            expect([name, unowned?.length, owned?.length]).toEqual([name, 2, 2])
            expect(plan).not.toMatch(/SCAN traces(?! USING)|traces_agent_/)
          }
        }
      }))

    it.effect("the stats of a window search the agent's time index once per bucket", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { bounds } = TraceStats.boundsOf(DateTime.unsafeMake("2026-11-01T00:00:00Z"), DateTime.unsafeMake("2026-11-02T00:00:00Z"), 24)
        const details = yield* planOf(SqlTraceStore.statsStatement(sql, { ...base, bounds }))
        expect(details).toMatch(/SEARCH t USING INDEX traces_agent_time/)
        expect(details).not.toMatch(/SCAN t(?! USING)/)
      }))
  })
})
