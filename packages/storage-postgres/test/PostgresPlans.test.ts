/**
 * Statements on a request's path read the caller's rows on Postgres too,
 * once the database has statistics (autovacuum keeps them; here `ANALYZE`
 * makes them): each case fills the tables with the skew that made the
 * statement read other tenants' rows, and names the index its plan must
 * search (docs/performance.md, "Traces read by who may see them").
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Ids, type Trace, TraceStats } from "@hosting/core"
import { SqlTraceStore } from "@hosting/storage-sql"
import { PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { DateTime, Effect, Layer, Option } from "effect"
import { afterAll } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

interface PlanNode {
  readonly "Index Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** The indexes that Postgres's plan of a compiled statement searches, with the values it is given. */
const indexesOf = (statement: { readonly compile: () => readonly [string, ReadonlyArray<unknown>] }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [text, params] = statement.compile()
    const rows = yield* sql.unsafe<{ readonly "QUERY PLAN": ReadonlyArray<{ readonly Plan: PlanNode }> }>(
      `EXPLAIN (FORMAT JSON) ${text}`,
      params
    )
    const names: Array<string> = []
    const walk = (node: PlanNode): void => {
      if (node["Index Name"] !== undefined) names.push(node["Index Name"])
      for (const child of node.Plans ?? []) walk(child)
    }
    for (const row of rows) for (const plan of row["QUERY PLAN"]) walk(plan.Plan)
    return names
  })

/** A reader of acct-1's agent `helper` from acct-2, who owns some of its chats. */
const query: Trace.TraceQuery = {
  publisher_id: Ids.AccountId.make("acct-1"),
  agent_name: Ids.AgentName.make("helper"),
  account_ids: [Ids.AccountId.make("acct-2")],
  viewer: Ids.UserId.make("user-1"),
  start: Option.none(),
  end: Option.none(),
  status: Option.none(),
  model: Option.none(),
  after: Option.none(),
  limit: 50,
  offset: 0
}

describe.skipIf(database === undefined)(`postgres: plans of the statements on a request's path: needs a server (${TestDatabase.skipReason})`, () => {
  it.layer(Layer.orDie(PostgresStorage.layer({ url: database?.url ?? "", maxConnections: 2 })), { timeout: 60_000 })((it) => {
    it.effect("an agent's traces page, count and stats search its traces by the reader's accounts and chats (migration 0024)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // 9,000 traces of the agent, one in eleven for the reader's account and of those two in three visible to
        // the reader (no owner, or the reader's chat); 20,000 traces of other agents.
        yield* sql`INSERT INTO traces (publisher_id, agent_name, trace_id, account_id, name, status, latency_ms, input, output, started_at, owner_id)
          SELECT 'acct-1', 'helper', md5(i::text), CASE WHEN i % 11 = 0 THEN 'acct-2' ELSE 'acct-' || (3 + i % 2000) END, 'chat',
            CASE WHEN i % 7 = 0 THEN 'error' ELSE 'ok' END, (i % 500)::float, 'in', 'out',
            to_char(timestamp '2026-11-01' + (i || ' seconds')::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            CASE WHEN i % 3 = 0 THEN NULL WHEN i % 3 = 1 THEN 'user-1' ELSE 'user-' || i END
          FROM generate_series(1, 9000) i`
        yield* sql`INSERT INTO traces (publisher_id, agent_name, trace_id, account_id, name, status, latency_ms, input, output, started_at, owner_id)
          SELECT 'acct-' || (10 + i % 500), 'agent-' || (i % 7), md5('other' || i), 'acct-' || (10 + i % 500), 'run', 'ok', 10, 'in', 'out',
            to_char(timestamp '2026-11-01' + (i || ' seconds')::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), NULL
          FROM generate_series(1, 20000) i`
        yield* sql`ANALYZE traces`

        const window = { ...query, start: Option.some(DateTime.unsafeMake("2026-11-01T00:00:00Z")), end: Option.some(DateTime.unsafeMake("2026-11-02T00:00:00Z")) }
        for (const q of [query, window]) {
          expect(yield* indexesOf(SqlTraceStore.pageStatement(sql, q))).toContain("traces_visible")
          expect(yield* indexesOf(SqlTraceStore.countStatement(sql, q))).toContain("traces_visible")
        }
        const { bounds } = TraceStats.boundsOf(DateTime.unsafeMake("2026-11-01T00:00:00Z"), DateTime.unsafeMake("2026-11-02T00:00:00Z"), 24)
        expect(yield* indexesOf(SqlTraceStore.statsStatement(sql, { ...query, bounds }))).toContain("traces_visible")
      }))
  })
})
