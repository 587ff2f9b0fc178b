/**
 * Statements straight on the pool (`DirectStatements`) on PostgreSQL: the
 * client of `PostgresStorage.client` takes the direct path, and inside a
 * transaction a statement runs on the transaction's connection (it sees the
 * transaction's writes, which another connection would not, and its
 * rollback undoes them).
 */
import { SqlClient } from "@effect/sql"
import { PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { DirectStatements } from "@hosting/storage-sql"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

describe.skipIf(database === undefined)(`statements straight on the pool: needs a server (${TestDatabase.skipReason})`, () => {
  it("runs against a fresh database", () => {
    if (database?.url.startsWith("postgres") !== true) throw new Error("no database")
  })
})

describe.skipIf(database === undefined)("statements straight on the pool (PostgreSQL)", () => {
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
    Effect.runPromise(Effect.provide(
      effect,
      Layer.merge(PostgresStorage.client({ url: database!.url, maxConnections: 4 }), Layer.setTracerEnabled(false))
    ))

  it("the client's statements take the direct path; a transaction's statements run on its connection", () =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(DirectStatements.isDirect(sql)).toBe(true)
      yield* sql`CREATE TABLE direct_notes (id SERIAL PRIMARY KEY, text TEXT NOT NULL)`
      const texts = Effect.map(sql<{ text: string }>`SELECT text FROM direct_notes ORDER BY id`, (rows) => rows.map((row) => row.text))
      const exit = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO direct_notes (text) VALUES ('dropped')`
        expect(yield* texts).toEqual(["dropped"])
        return yield* Effect.die(new Error("rolled back on purpose"))
      })))
      expect(exit._tag).toBe("Failure")
      expect(yield* texts).toEqual([])
      yield* sql`DROP TABLE direct_notes`
    })))
})
