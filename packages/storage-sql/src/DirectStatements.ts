/**
 * Statements of a client run straight on its connection while no tracer is
 * enabled.
 *
 * `@effect/sql` runs every statement inside a `sql.execute` span and an
 * `Effect.scoped` around the client's acquirer. With the tracer disabled
 * (as the example server runs) the span is a no-op, yet making it and
 * closing the scope cost more than the statement: the scope is added to the
 * fiber's context by copying the whole context (every service of the app),
 * once per statement. In the chat bench (`bench/core/chat.mjs history`) a
 * history read went from about 60 to about 35 µs of CPU with this.
 *
 * `directStatements(client)` makes the statements of `client` skip both,
 * when the client's acquirer hands out one connection that needs no scope
 * (our SQLite client, and `@effect/sql-pg`'s client, which runs each query
 * on its pool). The statement is compiled and executed by the same
 * connection method the library calls; inside a transaction it runs on the
 * transaction's connection, as the library's path does. Whenever the
 * library's path would do more (a tracer enabled, so that the span is real;
 * a row transformer set with `Statement.withTransformer`), the library's
 * path runs. Clients not given to `directStatements` are not touched.
 *
 * How: the library's statement class is not exported, so its
 * `withConnection` method is wrapped, once, on the prototype the client's
 * statements share; the wrapper takes the direct path only for statements
 * whose acquirer `directStatements` marked. If a later `@effect/sql` has no
 * such method, nothing is wrapped and statements run as the library runs
 * them (`isDirect` then says false, and the storage tests say so). See
 * docs/decisions.md, "Statements straight on the connection".
 */
import { SqlClient, type SqlConnection, Statement } from "@effect/sql"
import { Context, Effect, Exit, FiberRef } from "effect"

/** Marks an acquirer whose connection statements may use directly. */
const connectionKey = Symbol.for("@hosting/storage-sql/DirectStatements/connection")
/** Marks a prototype whose `withConnection` is wrapped already. */
const wrappedKey = Symbol.for("@hosting/storage-sql/DirectStatements/wrapped")

type Run = (connection: SqlConnection.Connection, sql: string, params: ReadonlyArray<unknown>) => Effect.Effect<unknown, unknown>

/** The parts of the library's statement class this module relies on. */
interface StatementInternals {
  readonly acquirer: Effect.Effect<SqlConnection.Connection> & { [connectionKey]?: SqlConnection.Connection }
  readonly compile: (withoutTransform?: boolean) => readonly [string, ReadonlyArray<unknown>]
  withConnection(operation: string, run: Run, withoutTransform?: boolean): Effect.Effect<unknown, unknown>
}

const transactionKey = SqlClient.TransactionConnection.key

const wrap = (prototype: StatementInternals & { [wrappedKey]?: true }) => {
  if (prototype[wrappedKey]) return
  const library = prototype.withConnection
  prototype.withConnection = function(this: StatementInternals, operation, run, withoutTransform = false) {
    const connection = this.acquirer[connectionKey]
    if (connection === undefined) return library.call(this, operation, run, withoutTransform)
    return Effect.withFiberRuntime((fiber) => {
      if (fiber.getFiberRef(FiberRef.currentTracerEnabled) || fiber.getFiberRef(Statement.currentTransformer)._tag === "Some") {
        return library.call(this, operation, run, withoutTransform)
      }
      const [sql, params] = this.compile(withoutTransform)
      const transaction = fiber.currentContext.unsafeMap.get(transactionKey) as
        | readonly [SqlConnection.Connection, number]
        | undefined
      return run(transaction === undefined ? connection : transaction[0], sql, params)
    })
  }
  prototype[wrappedKey] = true
}

/** The library's statement internals of a client's statement, if they are what this module expects. */
const internalsOf = (client: SqlClient.SqlClient): StatementInternals | undefined => {
  const statement = client`SELECT 1` as unknown as Partial<StatementInternals>
  const prototype = Object.getPrototypeOf(statement) as Partial<StatementInternals> | null
  return prototype !== null && typeof prototype.withConnection === "function" &&
      typeof statement.compile === "function" && Effect.isEffect(statement.acquirer)
    ? statement as StatementInternals
    : undefined
}

/**
 * Lets the statements of `client` run straight on the connection its
 * acquirer gives outside a transaction (see the module). An acquirer that
 * needs more than nothing to give it (a scope, a service) leaves the client
 * as it is.
 */
export const directStatements = (client: SqlClient.SqlClient): Effect.Effect<void> =>
  Effect.suspend(() => {
    const internals = internalsOf(client)
    if (internals === undefined) return Effect.void
    return Effect.exit(Effect.provide(internals.acquirer, Context.empty())).pipe(Effect.map((given) => {
      if (Exit.isFailure(given)) return
      wrap(Object.getPrototypeOf(internals))
      internals.acquirer[connectionKey] = given.value
    }))
  })

/** The connection `client`'s statements run on outside a transaction, once `directStatements` took it. */
export const connectionOf = (client: SqlClient.SqlClient): SqlConnection.Connection | undefined =>
  internalsOf(client)?.acquirer[connectionKey]

/** Whether `client`'s statements take the direct path (while no tracer is enabled). */
export const isDirect = (client: SqlClient.SqlClient): boolean => connectionOf(client) !== undefined
