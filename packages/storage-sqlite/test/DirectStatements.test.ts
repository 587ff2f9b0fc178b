/**
 * Statements straight on the connection (`DirectStatements`) on our SQLite
 * client: the same answers as the library's path, the transaction's
 * connection inside a transaction, and the library's path whenever it does
 * more (a tracer enabled, a row transformer set).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient, type SqlConnection, Statement } from "@effect/sql"
import { DirectStatements } from "@hosting/storage-sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Tracer } from "effect"
import * as Client from "../src/internal/client.js"

const withClient = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.provide(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)`
      return yield* effect
    }),
    Layer.merge(Client.layer({ filename: ":memory:" }), Layer.setTracerEnabled(false))
  )

const texts = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ text: string }>`SELECT text FROM notes ORDER BY id`).pipe(
  Effect.map((rows) => rows.map((row) => row.text))
)

/** A tracer that records the names of the spans made under it, made by `inner`. */
const recording = (inner: Tracer.Tracer) => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (name, ...rest) => {
      names.push(name)
      return inner.span(name, ...rest)
    },
    context: inner.context
  })
  return { names, tracer }
}

describe("statements straight on the connection (SQLite)", () => {
  it.effect("the client's statements take the direct path", () =>
    withClient(Effect.map(SqlClient.SqlClient, (sql) => expect(DirectStatements.isDirect(sql)).toBe(true))))

  it.effect("inside a transaction a statement runs on the transaction's connection: it sees the transaction's writes and its rollback undoes them", () =>
    withClient(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const failed = new Error("rolled back on purpose")
      const seen = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO notes (text) VALUES ('kept')`
        return yield* texts
      }))
      expect(seen).toEqual(["kept"])
      const exit = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO notes (text) VALUES ('dropped')`
        expect(yield* texts).toEqual(["kept", "dropped"])
        return yield* Effect.die(failed)
      })))
      expect(exit._tag).toBe("Failure")
      expect(yield* texts).toEqual(["kept"])
    }).pipe(Effect.disconnect, Effect.timeout("5 seconds"))))

  it.effect("with a tracer enabled, a statement runs the library's path and makes its sql.execute span", () =>
    withClient(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { names, tracer } = recording(yield* Effect.tracer)
      yield* sql`INSERT INTO notes (text) VALUES ('traced')`.pipe(Effect.withTracer(tracer), Effect.withTracerEnabled(true))
      expect(names).toEqual(["sql.execute"])
      yield* sql`INSERT INTO notes (text) VALUES ('untraced')`.pipe(Effect.withTracer(tracer))
      expect(names).toEqual(["sql.execute"])
      expect(yield* texts).toEqual(["traced", "untraced"])
    })))

  it.effect("a row transformer set with Statement.withTransformer still applies", () =>
    withClient(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO notes (text) VALUES ('stored')`
      const replaced = yield* sql<{ text: string }>`SELECT text FROM notes`.pipe(
        Statement.withTransformer((_, make) => Effect.succeed(make`SELECT 'transformed' AS text`))
      )
      expect(replaced).toEqual([{ text: "transformed" }])
    })))

  it.effect("a client whose acquirer needs a scope is left on the library's path", () =>
    Effect.gen(function*() {
      const connection = { execute: () => Effect.succeed([{ n: 1 }]) } as unknown as SqlConnection.Connection
      const client = yield* SqlClient.make({
        acquirer: Effect.as(Effect.addFinalizer(() => Effect.void), connection),
        compiler: Statement.makeCompilerSqlite(),
        spanAttributes: []
      })
      yield* DirectStatements.directStatements(client)
      expect(DirectStatements.isDirect(client)).toBe(false)
      expect(yield* client`SELECT 1 AS n`).toEqual([{ n: 1 }])
    }).pipe(Effect.provide(Layer.merge(Reactivity.layer, Layer.setTracerEnabled(false)))))
})
