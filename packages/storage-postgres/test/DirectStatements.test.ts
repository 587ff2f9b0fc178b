/**
 * Statements straight on the pool (`DirectStatements`) on PostgreSQL: the
 * client of `PostgresStorage.client` takes the direct path, and inside a
 * transaction a statement runs on the transaction's connection (it sees the
 * transaction's writes, which another connection would not, and its
 * rollback undoes them). Its transactions are ours too
 * (internal/directTransactions): they commit, roll back, nest as savepoints,
 * give their connection back when interrupted, and a connection whose
 * COMMIT failed is not given back to the pool.
 */
import { SqlClient } from "@effect/sql"
import { PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { DirectStatements } from "@hosting/storage-sql"
import { Cause, Effect, Exit, Fiber, Layer, Option, Tracer } from "effect"
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

describe.skipIf(database === undefined)("transactions on a client of the pool (PostgreSQL)", () => {
  // One connection: a transaction that kept its client would leave the next one waiting.
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
    Effect.runPromise(Effect.provide(
      effect,
      Layer.merge(PostgresStorage.client({ url: database!.url, maxConnections: 1 }), Layer.setTracerEnabled(false))
    ))

  const table = (name: string) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE ${sql(name)} (id SERIAL PRIMARY KEY, text TEXT NOT NULL UNIQUE DEFERRABLE INITIALLY DEFERRED)`
      return {
        insert: (text: string) => sql`INSERT INTO ${sql(name)} (text) VALUES (${text})`,
        texts: Effect.map(sql<{ text: string }>`SELECT text FROM ${sql(name)} ORDER BY id`, (rows) => rows.map((row) => row.text)),
        drop: sql`DROP TABLE ${sql(name)}`
      }
    })

  it("a transaction takes our path (no span of the library's in its context) and commits what succeeds", () =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const notes = yield* table("tx_commit")
      const parent = yield* sql.withTransaction(Effect.zipRight(notes.insert("kept"), Effect.serviceOption(Tracer.ParentSpan)))
      expect(Option.isNone(parent)).toBe(true)
      expect(yield* notes.texts).toEqual(["kept"])
      yield* notes.drop
    })))

  it("a failure rolls back; one transaction inside another is a savepoint of it", () =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const notes = yield* table("tx_nested")
      expect(yield* Effect.flip(sql.withTransaction(Effect.zipRight(notes.insert("rolled back"), Effect.fail("no"))))).toBe("no")
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* notes.insert("outer")
        expect(yield* Effect.flip(sql.withTransaction(Effect.zipRight(notes.insert("inner, rolled back"), Effect.fail("inner"))))).toBe("inner")
        yield* sql.withTransaction(notes.insert("inner, kept"))
      }))
      expect(yield* notes.texts).toEqual(["outer", "inner, kept"])
      yield* notes.drop
    })))

  it("an interrupted transaction rolls back and gives its connection back to the pool", () =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const notes = yield* table("tx_interrupted")
      const transaction = yield* Effect.fork(sql.withTransaction(Effect.zipRight(notes.insert("interrupted"), Effect.never)))
      yield* Effect.sleep("100 millis")
      yield* Fiber.interrupt(transaction)
      // The pool has one connection: the next transaction gets it only if the interrupted one gave it back.
      yield* sql.withTransaction(notes.insert("next")).pipe(Effect.timeout("2 seconds"))
      expect(yield* notes.texts).toEqual(["next"])
      yield* notes.drop
    })))

  it("a COMMIT that fails is a defect, nothing of the transaction stays, and the pool goes on with a new connection", () =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const notes = yield* table("tx_commit_fails")
      const backend = (yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`)[0]!.pid
      // The unique check is deferred to COMMIT, so the COMMIT is what fails.
      const exit = yield* Effect.exit(sql.withTransaction(Effect.zipRight(notes.insert("twice"), notes.insert("twice"))))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      expect(yield* notes.texts).toEqual([])
      const after = (yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`)[0]!.pid
      expect(after).not.toBe(backend)
      yield* notes.drop
    })))
})
