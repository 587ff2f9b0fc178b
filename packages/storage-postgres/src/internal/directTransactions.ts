/**
 * Transactions of the pool's client run by us while no tracer is enabled.
 *
 * `@effect/sql`'s `withTransaction` opens a `sql.transaction` span, reserves
 * a pooled connection in a scope of its own (`Effect.scoped` around the
 * acquirer, whose finalizer is added by copying the fiber's whole context
 * to diff it) and adds the span to the transaction's context. With the
 * tracer disabled the span is a no-op, and the rest cost about 3 % of a
 * chat message on Postgres (docs/performance.md, "Transactions on Postgres
 * and the deployment history kept"). Here a transaction takes a client
 * from the pool, runs BEGIN, the effect with the transaction's connection
 * in its context, then COMMIT or ROLLBACK, and gives the client back (the
 * steps are DirectTransactions', shared with the SQLite client): what the
 * library does, in the same order and with the same failures, without the
 * span and the scope.
 *
 * Two things differ, both on the side of safety: a client whose BEGIN,
 * COMMIT or ROLLBACK failed is destroyed rather than given back (it may
 * still be inside a transaction), as is one that emitted an error.
 *
 * The transaction's connection is the library's own connection class, made
 * on the reserved client, so its statements run exactly as the library's
 * transactions run them. If a later `@effect/sql-pg` has no such class to
 * reach, the library's transactions stay (see `directTransactions`).
 */
import { type SqlClient, type SqlConnection, SqlError } from "@effect/sql"
import { DirectStatements, DirectTransactions } from "@hosting/storage-sql"
import { Effect } from "effect"
import type pg from "pg"

type Connection = SqlConnection.Connection
type ConnectionClass = new (client: pg.PoolClient) => Connection

/** The library's connection class, when the client's outside connection is one made without a reserved client. */
const connectionClassOf = (client: SqlClient.SqlClient): ConnectionClass | undefined => {
  const outside = DirectStatements.connectionOf(client) as (Connection & { readonly pg?: unknown }) | undefined
  if (outside === undefined || !("pg" in outside) || outside.pg !== undefined) return undefined
  return outside.constructor as ConnectionClass
}

const acquireFailed = (cause: unknown) =>
  new SqlError.SqlError({ cause, message: "Failed to acquire connection for transaction" })

/** A pooled client taken for a transaction, with what it emitted while held. */
interface Reserved {
  readonly client: pg.PoolClient
  /** Set by the client's `error` event, or by a failed BEGIN, COMMIT or ROLLBACK: the client is destroyed. */
  broken: Error | undefined
  readonly onError: (cause: Error) => void
  readonly release: (destroy?: Error | boolean) => void
}

const reserve = (pool: pg.Pool): Effect.Effect<Reserved, SqlError.SqlError> =>
  Effect.async((resume) => {
    pool.connect((error, client, release) => {
      if (error) return resume(Effect.fail(acquireFailed(error)))
      if (!client) return resume(Effect.fail(acquireFailed(new Error("No client returned"))))
      const reserved: Reserved = {
        client,
        broken: undefined,
        onError: (cause) => {
          reserved.broken = cause
        },
        release
      }
      client.on("error", reserved.onError)
      resume(Effect.succeed(reserved))
    })
  })

/** BEGIN, COMMIT or ROLLBACK on the reserved client; a failure marks the client broken. */
const control = (reserved: Reserved, sql: string): Effect.Effect<void, SqlError.SqlError> =>
  Effect.async((resume) => {
    reserved.client.query(sql, (error) => {
      if (error) {
        reserved.broken = error
        resume(Effect.fail(new SqlError.SqlError({ cause: error, message: "Failed to execute statement" })))
      } else {
        resume(Effect.void)
      }
    })
  })

const giveBack = (reserved: Reserved) =>
  Effect.sync(() => {
    reserved.client.off("error", reserved.onError)
    reserved.release(reserved.broken)
  })

/**
 * Makes `client`'s transactions run on `pool` as the module says, while no
 * tracer is enabled (DirectTransactions; with one enabled, the library's).
 * Returns whether it could: when the library's connection class cannot be
 * reached (`DirectStatements` did not take the client's connection, or the
 * class changed), the client is left as it is.
 */
export const directTransactions = (client: SqlClient.SqlClient, pool: pg.Pool): boolean => {
  const Connection = connectionClassOf(client)
  if (Connection === undefined) return false
  const open = Effect.map(reserve(pool), (reserved): DirectTransactions.Opened => ({
    connection: new Connection(reserved.client),
    control: (sql) => control(reserved, sql),
    close: giveBack(reserved)
  }))
  Object.assign(client, { withTransaction: DirectTransactions.make(client.withTransaction, open) })
  return true
}
