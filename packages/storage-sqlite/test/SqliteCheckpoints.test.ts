/**
 * On a file whose write-ahead log has grown past 4 MB, the log is
 * checkpointed by a thread of its own (internal/checkpointer.ts) while the
 * serving connection writes: the rows reach the database file long before
 * the serving connection's own checkpoint (10,000 pages) would copy them. The thread stops with the
 * storage, and one that cannot work leaves a warning and the storage as it
 * was.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Effect, Layer, Logger } from "effect"
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Checkpointer from "../src/internal/checkpointer.js"

const withDir = <A, E, R>(use: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "hosting-checkpoints-"))),
    use,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const sizeOf = (file: string) => statSync(file).size

/** Writes about `megabytes` MB of rows in transactions of 100 rows of 10 KB. */
const write = (sql: SqlClient.SqlClient, megabytes: number) =>
  Effect.forEach(Array.from({ length: megabytes }, (_, i) => i), (batch) =>
    sql.withTransaction(Effect.forEach(Array.from({ length: 100 }, (_, i) => i), (i) =>
      sql`INSERT INTO filler (id, body) VALUES (${batch * 100 + i}, ${"x".repeat(10_000)})`, { discard: true })), { discard: true })

describe("SQLite checkpoints on a thread of their own", () => {
  it.live("the rows written reach the database file while the log is far below the serving connection's own checkpoint", () =>
    withDir((dir) =>
      Effect.gen(function*() {
        const filename = join(dir, "hosting.db")
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`
        const before = sizeOf(filename)
        // About 2,000 pages of 4 KB: past the 4 MB that start the thread, a fifth of what makes the serving connection
        // checkpoint.
        yield* write(sql, 8)
        const [pages] = yield* sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`
        expect(pages!.wal_autocheckpoint).toBe(10000)
        // Bounded wait: the log's size is looked at every second, then the thread checkpoints every second.
        let grown = sizeOf(filename) - before
        for (let i = 0; i < 100 && grown < 8_000_000; i++) {
          yield* Effect.sleep("100 millis")
          grown = sizeOf(filename) - before
        }
        expect(grown).toBeGreaterThanOrEqual(8_000_000)
        const [count] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM filler`
        expect(count!.n).toBe(800)
      }).pipe(Effect.provide(SqliteStorage.layer({ filename: join(dir, "hosting.db") })))
    ))

  it.live("the storage closes with its thread, and every row is there when the file is opened again", () =>
    withDir((dir) =>
      Effect.gen(function*() {
        const filename = join(dir, "hosting.db")
        const open = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
          Effect.scoped(Effect.flatMap(Layer.build(SqliteStorage.layer({ filename })), (context) => Effect.provide(effect, context)))
        yield* open(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`
          yield* write(sql, 2)
        })).pipe(Effect.timeout("10 seconds"))
        const check = yield* SqliteStorage.checkFile(filename)
        expect(check.integrity).toEqual(["ok"])
        yield* open(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const [count] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM filler`
          expect(count!.n).toBe(200)
        }))
      })
    ))

  it.live("a thread that cannot open the database says so in the log, and stops with its scope", () =>
    withDir((dir) =>
      Effect.gen(function*() {
        const lines: Array<string> = []
        const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void lines.push(String(message))))
        // A folder where the database should be: SQLite cannot open it.
        const filename = join(dir, "folder.db")
        mkdirSync(filename)
        writeFileSync(`${filename}-wal`, "a log")
        yield* Effect.scoped(Effect.gen(function*() {
          yield* Checkpointer.start(filename, { intervalMs: 100, startAtBytes: 1 })
          for (let i = 0; i < 50 && lines.length === 0; i++) yield* Effect.sleep("100 millis")
        })).pipe(Effect.provide(logger), Effect.timeout("10 seconds"))
        expect(lines.join("\n")).toMatch(/checkpoints of .*folder\.db are left to the serving connection/)
      })
    ))
})
