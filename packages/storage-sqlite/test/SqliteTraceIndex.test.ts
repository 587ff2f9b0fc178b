/**
 * The traces listing is served by the (agent, time) index: SQLite's plan for
 * the page and the count searches `traces_agent_time` instead of scanning.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Ids } from "@hosting/core"
import { SqlTraceStore } from "@hosting/storage-sql"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { DateTime, Effect, Option } from "effect"

describe("sqlite: traces index", () => {
  it.layer(SqliteStorage.layer({ filename: ":memory:" }))((it) => {
    it.effect("the page and count queries of a filtered listing search the traces_agent_time index", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const query = {
          publisher_id: Ids.AccountId.make("acct-1"),
          agent_name: Ids.AgentName.make("helper"),
          account_ids: [Ids.AccountId.make("acct-1"), Ids.AccountId.make("acct-2")],
          viewer: Ids.UserId.make("user-1"),
          start: Option.some(DateTime.unsafeMake("2026-11-01T00:00:00Z")),
          end: Option.some(DateTime.unsafeMake("2026-11-02T00:00:00Z")),
          status: Option.some("error" as const),
          limit: 50,
          offset: 100
        }
        for (const statement of [SqlTraceStore.pageStatement(sql, query), SqlTraceStore.countStatement(sql, query)]) {
          const [text, params] = statement.compile()
          const plan = yield* sql.unsafe<{ readonly detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)
          const details = plan.map((row) => row.detail).join("\n")
          expect(details).toContain("USING INDEX traces_agent_time")
          expect(details).not.toMatch(/SCAN traces(?! USING)/)
        }
      }))
  })
})
