/**
 * Statements on a request's path read the caller's rows on Postgres too,
 * once the database has statistics (autovacuum keeps them; here `ANALYZE`
 * makes them): each case fills the tables with the skew that made the
 * statement read other tenants' rows, and names the index its plan must
 * search (docs/performance.md, "Traces and deployments read by who may see
 * them").
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Ids, TraceStats } from "@hosting/core"
import { SqlDeploymentStore, SqlTraceStore } from "@hosting/storage-sql"
import { PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { TraceQueries } from "@hosting/testing"
import { DateTime, Effect, Layer, Option } from "effect"
import { afterAll } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

interface PlanNode {
  readonly "Node Type": string
  readonly "Index Name"?: string
  readonly "Scan Direction"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** The searches of an index in Postgres's plan of a compiled statement, with the values it is given. */
const searchesOf = (statement: { readonly compile: () => readonly [string, ReadonlyArray<unknown>] }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [text, params] = statement.compile()
    const rows = yield* sql.unsafe<{ readonly "QUERY PLAN": ReadonlyArray<{ readonly Plan: PlanNode }> }>(
      `EXPLAIN (FORMAT JSON) ${text}`,
      params
    )
    const searches: Array<{ readonly index: string; readonly how: string }> = []
    const walk = (node: PlanNode): void => {
      const index = node["Index Name"]
      if (index !== undefined) searches.push({ index, how: `${node["Node Type"]} ${node["Scan Direction"] ?? ""}`.trim() })
      for (const child of node.Plans ?? []) walk(child)
    }
    for (const row of rows) for (const plan of row["QUERY PLAN"]) walk(plan.Plan)
    return searches
  })

/** The indexes a plan searches. */
const indexesOf = (statement: { readonly compile: () => readonly [string, ReadonlyArray<unknown>] }) =>
  Effect.map(searchesOf(statement), (searches) => searches.map((search) => search.index))

/** A reader of acct-1's agent `helper` from acct-2, who owns some of its chats. */
const query = TraceQueries.of({
  publisher_id: Ids.AccountId.make("acct-1"),
  agent_name: Ids.AgentName.make("helper"),
  account_ids: [Ids.AccountId.make("acct-2")],
  viewer: Ids.UserId.make("user-1")
})

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
        // An agent whose 9,000 traces are all its account's, without an owner: every one visible to its members.
        yield* sql`INSERT INTO traces (publisher_id, agent_name, trace_id, account_id, name, status, latency_ms, input, output, started_at, owner_id)
          SELECT 'acct-2', 'solo', md5('solo' || i), 'acct-2', 'run', 'ok', (i % 300)::float, 'in', 'out',
            to_char(timestamp '2026-11-01' + (i || ' seconds')::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), NULL
          FROM generate_series(1, 9000) i`
        yield* sql`ANALYZE traces`

        const window = { ...query, start: Option.some(DateTime.unsafeMake("2026-11-01T00:00:00Z")), end: Option.some(DateTime.unsafeMake("2026-11-02T00:00:00Z")) }
        // A reader of one account, the same in a window, a reader of two accounts, and a reader of all of an agent's traces.
        const twoAccounts = { ...query, account_ids: [Ids.AccountId.make("acct-1"), Ids.AccountId.make("acct-2")] }
        const allVisible = { ...query, publisher_id: Ids.AccountId.make("acct-2"), agent_name: Ids.AgentName.make("solo") }
        for (const q of [query, window, twoAccounts, allVisible]) {
          // Of each account, the traces without an owner and the reader's own: a range of an index each, read newest
          // first up to the page's end (a bitmap search would read the whole range, then sort it).
          const page = yield* searchesOf(SqlTraceStore.pageStatement(sql, q))
          for (const index of ["traces_unowned", "traces_owned"]) {
            expect(page.filter((search) => search.index === index).map((search) => search.how)).toEqual(
              q.account_ids.map(() => expect.stringMatching(/^Index (Only )?Scan Backward$/))
            )
          }
          // The count: each key's range of the same indexes, counted.
          const count = yield* indexesOf(SqlTraceStore.countStatement(sql, q))
          expect(count.filter((index) => index === "traces_unowned")).toHaveLength(q.account_ids.length)
          expect(count.filter((index) => index === "traces_owned")).toHaveLength(q.account_ids.length)
        }
        const { bounds } = TraceStats.boundsOf(DateTime.unsafeMake("2026-11-01T00:00:00Z"), DateTime.unsafeMake("2026-11-02T00:00:00Z"), 24)
        expect(yield* indexesOf(SqlTraceStore.statsStatement(sql, { ...query, bounds }))).toEqual(
          expect.arrayContaining(["traces_unowned", "traces_owned"])
        )
      }))

    it.effect("a page of the live deployments of some accounts reads each account's live ones by id (migration 0025)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // An account with a long history (23,000 deployments, 20 of them live) beside 10,000 deployments of others.
        yield* sql`INSERT INTO accounts (id, name, created_at)
          SELECT 'pa-' || i, 'plan-account-' || i, '2026-01-01T00:00:00.000Z' FROM generate_series(1, 300) i`
        yield* sql`INSERT INTO deployments (id, account_id, publisher_id, agent_name, build_id, namespace, status, deployed_at, undeployed_at, spec)
          SELECT md5('mine' || i), 'pa-5', 'pa-1', 'helper', 'b-1', 'ns-pa-5', 'running',
            to_char(timestamp '2026-01-01' + (i || ' minutes')::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            CASE WHEN i % 1150 = 0 THEN NULL ELSE '2026-12-01T00:00:00.000Z' END, '{}'
          FROM generate_series(1, 23000) i`
        yield* sql`INSERT INTO deployments (id, account_id, publisher_id, agent_name, build_id, namespace, status, deployed_at, undeployed_at, spec)
          SELECT md5('theirs' || i), 'pa-' || (100 + i % 200), 'pa-1', 'helper', 'b-1', 'ns-' || i, 'running',
            to_char(timestamp '2026-01-01' + (i || ' minutes')::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            CASE WHEN i % 3 = 0 THEN NULL ELSE '2026-12-01T00:00:00.000Z' END, '{}'
          FROM generate_series(1, 10000) i`
        yield* sql`ANALYZE deployments`

        const indexes = yield* indexesOf(SqlDeploymentStore.liveOfAccountsStatement(sql, ["pa-5", "pa-6"], undefined, 100))
        expect(indexes.filter((name) => name === "deployments_account_live")).toHaveLength(2)
        const store = yield* SqlDeploymentStore.make
        const page = yield* store.liveOfAccounts([Ids.AccountId.make("pa-5"), Ids.AccountId.make("pa-6")], undefined, 100)
        expect(page.map((d) => d.id)).toEqual(
          (yield* sql<{ readonly id: string }>`SELECT id FROM deployments WHERE account_id = 'pa-5' AND undeployed_at IS NULL ORDER BY id`)
            .map((row) => row.id)
        )
      }))

    it.effect("a namespace's live deployments are read from the index of its live ones, not from its history (migration 0026)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // A namespace deployed again and again (10,000 deployments, the newest live) beside 40,000 deployments of
        // 20,000 other namespaces, half of them live (the plan names the index without 2.8 ms a statement).
        yield* sql`INSERT INTO deployments (id, account_id, publisher_id, agent_name, build_id, namespace, status, deployed_at, undeployed_at, spec)
          SELECT md5('again' || i), 'pa-7', 'pa-1', 'helper', 'b-1', 'ns-again', 'running',
            to_char(timestamp '2026-01-01' + (i || ' minutes')::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            CASE WHEN i = 10000 THEN NULL ELSE '2026-12-01T00:00:00.000Z' END, '{}'
          FROM generate_series(1, 10000) i`
        yield* sql`INSERT INTO deployments (id, account_id, publisher_id, agent_name, build_id, namespace, status, deployed_at, undeployed_at, spec)
          SELECT md5('other' || i), 'pa-8', 'pa-1', 'helper', 'b-1', 'ns-other-' || (i % 20000), 'running',
            to_char(timestamp '2026-01-01' + (i || ' minutes')::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            CASE WHEN i % 2 = 0 THEN NULL ELSE '2026-12-01T00:00:00.000Z' END, '{}'
          FROM generate_series(1, 40000) i`
        yield* sql`ANALYZE deployments`

        expect(yield* indexesOf(SqlDeploymentStore.liveInNamespaceStatement(sql, "ns-again"))).toEqual(["deployments_namespace_live"])
        const store = yield* SqlDeploymentStore.make
        expect((yield* store.liveInNamespace("ns-again")).map((d) => d.id)).toEqual(
          (yield* sql<{ readonly id: string }>`SELECT id FROM deployments WHERE namespace = 'ns-again' AND undeployed_at IS NULL`).map((row) => row.id)
        )
      }))
  })
})
