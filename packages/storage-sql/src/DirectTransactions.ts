/**
 * Transactions of a client run by us while no tracer is enabled.
 *
 * `@effect/sql`'s `withTransaction` opens a `sql.transaction` span, gets its
 * connection through a scope of its own (whose finalizer diffs the fiber's
 * whole context when it is added) and adds the span to the transaction's
 * context. With the tracer disabled the span is a no-op, and the rest cost
 * tens of µs a transaction (docs/performance.md, "Transactions").
 *
 * `make(library, open)` does what the library does, in the same order and
 * with the same failures, without the span and the scope: `open` gives the
 * transaction's connection (a SQLite client's after its turn, a client of a
 * Postgres pool), BEGIN, the effect with that connection in its context,
 * then COMMIT or ROLLBACK (a failed one is a defect), and `close` whatever
 * happened. A transaction inside another is a savepoint on the outer one's
 * connection, rolled back to when it fails. With a tracer enabled, the
 * library's `withTransaction` runs, so that its spans are real.
 */
import { SqlClient, type SqlConnection, type SqlError } from "@effect/sql"
import { Contexts, Steps } from "@hosting/core"
import { Context, Effect, Exit, FiberRef } from "effect"

/** A transaction's connection, as a client opens it. */
export interface Opened {
  readonly connection: SqlConnection.Connection
  /** Runs BEGIN, COMMIT or ROLLBACK on the connection. */
  readonly control: (sql: "BEGIN" | "COMMIT" | "ROLLBACK") => Effect.Effect<void, SqlError.SqlError>
  /** Ends the transaction's hold on the connection, however it went. */
  readonly close: Effect.Effect<void>
}

const key = SqlClient.TransactionConnection.key

/** A client's `withTransaction` as the module says; `library` is the client's own, `open` runs uninterruptibly. */
export const make = (
  library: SqlClient.SqlClient["withTransaction"],
  open: Effect.Effect<Opened, SqlError.SqlError>
): SqlClient.SqlClient["withTransaction"] =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  Effect.withFiberRuntime((fiber, status) => {
    if (fiber.getFiberRef(FiberRef.currentTracerEnabled)) return library(effect)
    const context = fiber.currentContext
    // The fiber's context back as it was: set in one step, as `Effect.locally` would (which takes a dozen to acquire,
    // use and release). `within` runs where nothing interrupts it (the transaction's mask) and its effect's exit is
    // caught, so the way back is always taken.
    const back = FiberRef.set(FiberRef.currentContext, context as Context.Context<never>)
    const within = (
      connection: SqlConnection.Connection,
      id: number,
      restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>
    ) =>
      Effect.zipRight(
        FiberRef.set(
          FiberRef.currentContext,
          // Read through, not copied: the fiber's context holds every service of the app.
          Contexts.add(context, SqlClient.TransactionConnection, [connection, id] as const) as Context.Context<never>
        ),
        Effect.flatMap(Effect.exit(restore(effect)), (exit) => Effect.as(back, exit))
      )
    const outer = context.unsafeMap.get(key) as readonly [SqlConnection.Connection, number] | undefined
    if (outer !== undefined) {
      const [connection, depth] = outer
      const savepoint = `effect_sql_${depth + 1}`
      return Steps.uninterruptibleMaskFor(status, (restore) =>
        Effect.zipRight(
          connection.executeUnprepared(`SAVEPOINT ${savepoint}`, [], undefined),
          Effect.flatMap(within(connection, depth + 1, restore), (exit) =>
            Exit.isSuccess(exit)
              ? exit
              : Effect.zipRight(Effect.orDie(connection.executeUnprepared(`ROLLBACK TO SAVEPOINT ${savepoint}`, [], undefined)), exit))
        ))
    }
    // The mask only where the fiber is interruptible: a group commit's transaction runs in a region already (Steps).
    return Steps.uninterruptibleMaskFor(status, (restore) =>
      Effect.flatMap(open, (opened) =>
        // `close` follows whatever end: nothing here is interrupted (the mask), so a match does what
        // `Effect.ensuring` does without the steps of a mask of its own.
        Effect.matchCauseEffect(
          Effect.zipRight(
            opened.control("BEGIN"),
            Effect.flatMap(within(opened.connection, 0, restore), (exit) =>
              Effect.zipRight(Steps.catchFailure(opened.control(Exit.isSuccess(exit) ? "COMMIT" : "ROLLBACK"), Effect.die), exit))
          ),
          {
            onSuccess: (value) => Effect.as(opened.close, value),
            onFailure: (cause) => Effect.zipRight(opened.close, Effect.failCause(cause))
          }
        ))
    )
  })
