/**
 * Statements that run on a request's path (or hold the one connection of a
 * SQLite server while they run) read the caller's rows, not the server's:
 * SQLite, which has no statistics here, is shown to search an index keyed by
 * what the caller asks for. Each case names the statement whose plan read
 * every row of a table before (docs/performance.md, "Statements that read
 * the whole server").
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { SqlAgentStore, SqlConversationStore, SqlDeploymentStore, SqlTokenStore, SqlTraceStore } from "@hosting/storage-sql"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Effect, Option } from "effect"

/** SQLite's plan of a compiled statement, one line a step. */
const planOf = (statement: { readonly compile: () => readonly [string, ReadonlyArray<unknown>] }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [text, params] = statement.compile()
    const plan = yield* sql.unsafe<{ readonly detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)
    return plan.map((row) => row.detail).join("\n")
  })

describe("sqlite: plans of the statements on a request's path", () => {
  it.layer(SqliteStorage.layer({ filename: ":memory:" }))((it) => {
    it.effect("the conversation list counts each conversation's streaming replies by its id (migration 0020)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = yield* planOf(SqlConversationStore.listStatement(sql, "dep-1", "alice"))
        expect(plan).toMatch(/SEARCH c USING INDEX conversations_owner/)
        expect(plan).toMatch(/SEARCH m USING COVERING INDEX messages_streaming_conversation \(conversation_id=\?\)/)
      }))

    it.effect("the statements that read every streaming reply scan the same index, and the one keyed by status is gone", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = yield* sql<{ readonly detail: string }>`EXPLAIN QUERY PLAN
          UPDATE messages SET lease_expires_at = 'later' WHERE lease_owner = 'p-1' AND status = 'streaming'`
        expect(plan.map((row) => row.detail).join("\n")).toMatch(/USING INDEX messages_streaming_conversation/)
        const indexes = yield* sql<{ readonly name: string }>`SELECT name FROM sqlite_master
          WHERE type = 'index' AND tbl_name = 'messages' AND name LIKE 'messages_streaming%'`
        expect(indexes.map((row) => row.name)).toEqual(["messages_streaming_conversation"])
      }))

    it.effect("a token's principal reads its user's memberships by the user, never every membership of the server", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = yield* planOf(SqlTokenStore.principalStatement(sql, "hash"))
        expect(plan).toMatch(/SEARCH t USING INDEX sqlite_autoindex_tokens_1 \(hash=\?\)/)
        expect(plan).toMatch(/SEARCH m USING INDEX memberships_user \(user_id=\?\)/)
        expect(plan).not.toMatch(/SCAN m|MATERIALIZE/)
      }))

    it.effect("the poll of rollouts walks the partial index of unsettled deployments; any other status is still bound", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = yield* planOf(SqlDeploymentStore.liveWithStatusStatement(sql, ["pending", "progressing"], undefined, 100))
        expect(plan).toMatch(/SEARCH d USING INDEX deployments_unsettled/)
        const [text, params] = SqlDeploymentStore.liveWithStatusStatement(sql, ["pending", "x') OR ('1'='1"], "d-1", 10).compile()
        expect(text).not.toContain("'1'='1")
        expect(params).toContain("x') OR ('1'='1")
      }))

    it.effect("a namespace's newest deployment is searched by the namespace, its live ones by its live ones, newest first without a sort (migrations 0021, 0026)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const newest = yield* planOf(SqlDeploymentStore.newestInNamespaceStatement(sql, "ns-1"))
        expect(newest).toMatch(/SEARCH d USING INDEX deployments_namespace \(namespace=\?\)/)
        const live = yield* planOf(SqlDeploymentStore.liveInNamespaceStatement(sql, "ns-1"))
        expect(live).toMatch(/SEARCH d USING INDEX deployments_namespace_live \(namespace=\?\)/)
        expect(`${newest}\n${live}`).not.toMatch(/TEMP B-TREE/)
      }))

    it.effect("the accounts that run an agent are read from the index of its live deployments, in order (migration 0023)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = yield* planOf(SqlDeploymentStore.accountsDeployingStatement(sql, "acct-1", "helper"))
        expect(plan).toMatch(/SEARCH deployments USING (COVERING )?INDEX deployments_agent_live \(publisher_id=\? AND agent_name=\?\)/)
        expect(plan).not.toMatch(/TEMP B-TREE/)
      }))

    it.effect("a page of the live deployments of some accounts reads each account's live ones by id, never its ended ones (migration 0025)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = yield* planOf(SqlDeploymentStore.liveOfAccountsStatement(sql, ["acct-1", "acct-2"], "d-1", 50))
        const searches = plan.match(/SEARCH deployments USING (COVERING )?INDEX deployments_account_live \(account_id=\? AND id>\?\)/g) ?? []
        expect(searches).toHaveLength(2)
        expect(plan).not.toMatch(/deployments_account\b(?!_live)|SCAN d\b/)
      }))

    it.effect("the sweep finds orphan spans through their index of times, not by walking every span", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = yield* planOf(SqlTraceStore.orphanSpansStatement(sql, "2026-01-01T00:00:00.000Z", 500))
        expect(plan).toMatch(/SEARCH s USING INDEX trace_spans_time \(started_at<\?\)/)
        expect(plan).not.toMatch(/SCAN s/)
      }))

    it.effect("a catalog page and its total are ranges of the index of published agents, newest first without a sort (migration 0022)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        for (const q of [Option.none(), Option.some("acme")]) {
          const statements = SqlAgentStore.catalogStatements(sql, { q, limit: 20, offset: 0 })
          const page = yield* planOf(statements.page)
          expect(page).toMatch(/SEARCH ag USING INDEX agents_catalog \(last_published_at>\?\)/)
          expect(page).not.toMatch(/TEMP B-TREE|builds/)
          const count = yield* planOf(statements.count)
          expect(count).toMatch(/SEARCH ag USING (COVERING )?INDEX agents_catalog \(last_published_at>\?\)/)
          expect(count).not.toMatch(/builds/)
        }
      }))
  })
})
