/**
 * Migrations over data stored before them: what an upgraded server shows of
 * the rows an older one wrote.
 */
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { describe, expect, it } from "@effect/vitest"
import { Ids } from "@hosting/core"
import { Migrations, SqlAgentStore, SqlTokenStore, SqlTraceStore } from "@hosting/storage-sql"
import { TraceQueries } from "@hosting/testing"
import { DateTime, Effect, Option } from "effect"
import * as Client from "../src/internal/client.js"

/** Runs the migrations before `first` (by their `<number>_` key), as an older server did. */
const migrateBefore = (first: string) =>
  Migrator.make({})({
    loader: Migrator.fromRecord(Object.fromEntries(Object.entries(Migrations.migrations).filter(([key]) => key < first))),
    table: "hosting_migrations"
  })

describe("sqlite: migrations over older data", () => {
  it.effect("0008_trace_owners: stored chat turns, whose conversation is unknown, are hidden; exported spans stay listed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrateBefore("0008")
      const row = (traceId: string, name: string) =>
        sql`INSERT INTO traces (publisher_id, agent_name, trace_id, account_id, name, status, latency_ms, input, output, started_at)
          VALUES ('acct-1', 'helper', ${traceId}, 'acct-1', ${name}, 'ok', 1, 'private question', 'reply', '2026-11-01T10:00:00.000Z')`
      yield* row("t-turn", "chat")
      yield* row("t-span", "answer")
      yield* Migrations.run
      const store = yield* SqlTraceStore.make
      const page = yield* store.query(TraceQueries.of({
        publisher_id: Ids.AccountId.make("acct-1"),
        agent_name: Ids.AgentName.make("helper"),
        account_ids: [Ids.AccountId.make("acct-1")],
        viewer: Ids.UserId.make("user-1")
      }))
      expect([page.total, page.traces.map((t) => t.trace_id)]).toEqual([1, ["t-span"]])
    }).pipe(Effect.provide(Client.layer({ filename: ":memory:" }))))

  it.effect("0009_token_parents: tokens stored before keep working, and the sessions made from them from now on end with them", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`PRAGMA foreign_keys = ON`
      yield* migrateBefore("0009")
      yield* sql`INSERT INTO users (id, name, created_at) VALUES ('user-1', 'One', '2026-11-01T00:00:00.000Z')`
      yield* sql`INSERT INTO tokens (hash, user_id, expires_at, created_at) VALUES ('old', 'user-1', NULL, '2026-11-01T00:00:00.000Z')`
      yield* Migrations.run
      const tokens = yield* SqlTokenStore.make
      expect(Option.isSome(yield* tokens.findPrincipal("old"))).toBe(true)
      const now = DateTime.unsafeMake("2026-11-02T00:00:00Z")
      expect(yield* tokens.add({ hash: "session", user_id: Ids.UserId.make("user-1"), expires_at: Option.none(), parent_hash: Option.some("old"), now }))
        .toBe(true)
      expect(yield* tokens.remove("old")).toBe(true)
      expect(Option.isNone(yield* tokens.findPrincipal("session"))).toBe(true)
    }).pipe(Effect.provide(Client.layer({ filename: ":memory:" }))))

  it.effect("0022_catalog_on_agents: agents published before are listed by their newest publication; unpublished ones are not", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrateBefore("0022")
      const created = "2026-11-01T00:00:00.000Z"
      yield* sql`INSERT INTO accounts (id, name, created_at) VALUES ('acct-1', 'acme', ${created})`
      for (const agent of ["older", "newer", "draft"]) {
        yield* sql`INSERT INTO agents (id, account_id, name, registry, created_at, updated_at)
          VALUES (${`agent-${agent}`}, 'acct-1', ${agent}, 'registry.example.com/acme', ${created}, ${created})`
      }
      const build = (agent: string, id: string, version: string | null, publishedAt: string | null) =>
        sql`INSERT INTO builds (agent_id, build_id, spec, spec_content, readme, validation_warnings, version, published_at,
            registered_at, updated_at)
          VALUES (${`agent-${agent}`}, ${id}, '{}', '', '', '[]', ${version}, ${publishedAt}, ${created}, ${created})`
      yield* build("older", "b-1", "1.0.0", "2026-11-02T00:00:00.000Z")
      yield* build("older", "b-2", "1.1.0", "2026-11-03T00:00:00.000Z")
      yield* build("newer", "b-1", "0.1.0", "2026-11-04T00:00:00.000Z")
      yield* build("draft", "b-1", null, null)
      yield* Migrations.run
      const store = yield* SqlAgentStore.make
      const listed = yield* store.listPublished({ q: Option.none(), limit: 50, offset: 0 })
      expect(listed.total).toBe(2)
      expect(listed.agents.map((a) => [a.name, DateTime.formatIso(a.published_at), a.versions_count, a.latest_version])).toEqual([
        ["newer", "2026-11-04T00:00:00.000Z", 1, "0.1.0"],
        ["older", "2026-11-03T00:00:00.000Z", 2, "1.1.0"]
      ])
    }).pipe(Effect.provide(Client.layer({ filename: ":memory:" }))))
})
