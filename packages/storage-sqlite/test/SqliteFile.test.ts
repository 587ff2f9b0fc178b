/**
 * On a file, SQLite runs in WAL mode with foreign keys enforced, and what was
 * written is there when the database is opened again.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Ids, Ports } from "@hosting/core"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { DateTime, Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

describe("SQLite on a file", () => {
  it.live("WAL mode checkpointed every 10,000 pages, foreign keys on, the migrations applied once, data kept across opens", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "hosting-sqlite-"))
      const filename = join(dir, "nested", "hosting.db")
      try {
        const open = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | Ports.AccountStore>) =>
          Effect.scoped(Effect.flatMap(Layer.build(SqliteStorage.layer({ filename })), (context) => Effect.provide(effect, context)))
        yield* open(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const [mode] = yield* sql<{ journal_mode: string }>`PRAGMA journal_mode`
          expect(mode!.journal_mode).toBe("wal")
          const [keys] = yield* sql<{ foreign_keys: number }>`PRAGMA foreign_keys`
          expect(keys!.foreign_keys).toBe(1)
          const [checkpoint] = yield* sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`
          expect(checkpoint!.wal_autocheckpoint).toBe(10000)
          const accounts = yield* Ports.AccountStore
          yield* accounts.ensure({
            id: Ids.AccountId.make("a-1"),
            name: Ids.AccountName.make("kept"),
            now: DateTime.unsafeMake("2026-11-01T00:00:00Z")
          })
          const broken = yield* Effect.flip(sql`INSERT INTO memberships (account_id, user_id, role) VALUES ('nope', 'nobody', 'owner')`)
          expect(String((broken as { cause?: unknown }).cause)).toMatch(/FOREIGN KEY/i)
        }))
        yield* open(Effect.gen(function*() {
          const accounts = yield* Ports.AccountStore
          expect(Option.isSome(yield* accounts.findByName(Ids.AccountName.make("kept")))).toBe(true)
        }))
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }))
})
