/**
 * An `SqlClient` on one better-sqlite3 connection, built with `@effect/sql`'s
 * own `SqlClient.make` (so statements, helpers, transactions and the migrator
 * work as with any client), with less work around each statement than
 * `@effect/sql-sqlite-node` does:
 *
 * - Prepared statements are kept in a plain `Map` (bounded), not in an
 *   Effect `Cache`, whose lookup allocates a `Deferred` and reads the clock.
 * - A statement outside a transaction does not take the connection's turn. A
 *   better-sqlite3 statement runs to its end synchronously, so it only has to
 *   wait when another fiber holds a transaction open on the connection; it
 *   checks that in the same synchronous step that runs it, and only then
 *   waits for the transaction's end. (`@effect/sql-sqlite-node` took the
 *   permit only to hand out the connection and ran the statement after
 *   giving it back, so a transaction could begin in between.) A transaction
 *   takes the connection's one turn (`makeTurn`, a lock of our own), so
 *   transactions run one at a time.
 * - No turn is ever lost to an interruption (see `afterTransaction`).
 * - While no tracer is enabled, a statement runs on the connection with no
 *   span and no scope around it (`DirectStatements`).
 *
 * See docs/decisions.md, "Our own SQLite client".
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient, type SqlConnection, SqlError, Statement } from "@effect/sql"
import { Recent } from "@hosting/core"
import { DirectStatements, DirectTransactions } from "@hosting/storage-sql"
import Database from "better-sqlite3"
import { Context, Effect, Layer, Stream } from "effect"

export interface ClientConfig {
  /** A file path, or `:memory:`. */
  readonly filename: string
  /** How many prepared statements are kept (default 500); the oldest goes first. */
  readonly statementCacheSize?: number | undefined
}

type Rows = ReadonlyArray<any>
type Transform = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

/**
 * The connection's turn for a transaction: a lock of one, handed to the
 * fibers that wait in the order they came. It does what effect's
 * `Semaphore` of one permit does here in a step where the turn is free
 * (the semaphore's `take` costs the run loop about a dozen, its `release`
 * five; every transaction pays both: docs/performance.md, "Fewer steps of
 * the run loop").
 *
 * Every caller takes it where it is not interrupted (a taken turn must
 * reach its release). Should a waiter be interrupted all the same, it
 * leaves the line, and a turn handed to it in that moment is passed on.
 */
export const makeTurn = () => {
  let held = false
  const waiting: Array<() => void> = []
  const handOn = () => {
    const next = waiting.shift()
    if (next === undefined) held = false
    else next()
  }
  const wait = Effect.async<void>((resume) => {
    // Looked at again: the fiber may have yielded between `take`'s look and this step, and the turn ended meanwhile.
    if (!held) {
      held = true
      return resume(Effect.void)
    }
    let granted = false
    const grant = () => {
      granted = true
      resume(Effect.void)
    }
    waiting.push(grant)
    return Effect.sync(() => {
      if (granted) handOn()
      else waiting.splice(waiting.indexOf(grant), 1)
    })
  })
  const take: Effect.Effect<void> = Effect.suspend(() => {
    if (held) return wait
    held = true
    return Effect.void
  })
  const release: Effect.Effect<void> = Effect.sync(handOn)
  return { take, release } as const
}

const failure = (message: string) => (cause: unknown) => new SqlError.SqlError({ cause, message })
const prepareFailed = failure("Failed to prepare statement")
const executeFailed = failure("Failed to execute statement")

interface RowMaker {
  readonly width: number
  readonly make: (row: ReadonlyArray<unknown>) => Record<string, unknown>
}

/** A row's object made by a loop over the names: a name that repeats keeps its last value, as better-sqlite3 does. */
const rowLoop = (names: ReadonlyArray<string>) => (row: ReadonlyArray<unknown>) => {
  const object: Record<string, unknown> = {}
  for (let c = 0; c < names.length; c++) object[names[c]!] = row[c]
  return object
}

/**
 * The maker of a statement's row objects: an object literal of the
 * statement's column names, made once from source text, so that every row
 * gets its properties at once and the same shape, where a loop sets them
 * one name at a time. Names go into the source as JSON string literals; a
 * literal keeps the last of a repeated name, as the loop does. The loop
 * stays for `__proto__` (a literal would set the prototype) and where the
 * platform refuses to make functions from text.
 */
const rowMaker = (names: ReadonlyArray<string>): RowMaker => {
  const loop = rowLoop(names)
  if (names.includes("__proto__")) return { width: names.length, make: loop }
  try {
    const fields = names.map((name, c) => `${JSON.stringify(name)}: row[${c}]`).join(", ")
    return { width: names.length, make: new Function("row", `return { ${fields} }`) as RowMaker["make"] }
  } catch {
    return { width: names.length, make: loop }
  }
}

/** Opens the database; closed when `scope` closes. */
const open = (config: ClientConfig) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const db = new Database(config.filename)
        db.pragma("journal_mode = WAL")
        return db
      },
      catch: failure(`Failed to open the SQLite database ${config.filename}`)
    }),
    (db) => Effect.sync(() => db.close())
  )

/** The client on an open database, closed with the scope. */
export const make = (config: ClientConfig) =>
  Effect.gen(function*() {
    const db = yield* open(config)
    const capacity = config.statementCacheSize ?? 500
    const prepared = Recent.make<string, Database.Statement>(capacity)

    const prepare = (sql: string): Database.Statement => {
      const found = prepared.get(sql)
      if (found !== undefined) return found
      const statement = db.prepare(sql)
      prepared.set(sql, statement)
      return statement
    }

    /** Per reading statement: its column names and the function that makes a row's object (`columns()` makes an object per column on each call). */
    const rowMakers = new WeakMap<Database.Statement, RowMaker>()
    const rowMakerOf = (statement: Database.Statement, width: number) => {
      let maker = rowMakers.get(statement)
      // A statement SQLite prepared again for a changed schema (`SELECT *`) may have other columns.
      if (maker === undefined || maker.width !== width) {
        maker = rowMaker(statement.columns().map((column) => column.name))
        rowMakers.set(statement, maker)
      }
      return maker
    }

    /** A statement's rows as arrays (`raw` must be on), for "values"; as objects by column name otherwise. */
    const readAll = (statement: Database.Statement, params: ReadonlyArray<unknown>, mode: "rows" | "raw" | "values") => {
      const rows = statement.all(...params) as Array<Array<unknown>>
      if (mode === "values" || rows.length === 0) return rows
      // better-sqlite3 sets a row's properties one by one from C++; made here they cost a fraction
      // (docs/performance.md, "Rows read as arrays").
      const { make } = rowMakerOf(statement, rows[0]!.length)
      const objects = new Array<Record<string, unknown>>(rows.length)
      for (let r = 0; r < rows.length; r++) objects[r] = make(rows[r]!)
      return objects
    }

    /** Runs one statement to its end; throws what better-sqlite3 throws. */
    const runNow = (
      statement: Database.Statement,
      params: ReadonlyArray<unknown>,
      mode: "rows" | "raw" | "values",
      safeIntegers: boolean
    ): unknown => {
      statement.safeIntegers(safeIntegers)
      if (!statement.reader) {
        const result = statement.run(...params)
        return mode === "raw" ? result : []
      }
      statement.raw(true)
      try {
        return readAll(statement, params, mode)
      } finally {
        statement.raw(false)
      }
    }

    // The connection's one turn: held by a transaction from its BEGIN to its end.
    const turn = makeTurn()
    let inTransaction = false

    /**
     * Runs `run` once the open transaction has ended, holding the turn
     * meanwhile. Taking the turn and arranging its release are one
     * uninterruptible step (effect 3.22's `withPermits` took a permit
     * where an interruption can still arrive before the release is
     * arranged, and a turn lost so stops every later statement for good).
     * The wait is short (a transaction's statements run back to back).
     */
    const afterTransaction = (run: () => Effect.Effect<unknown, SqlError.SqlError>) =>
      Effect.uninterruptible(Effect.zipRight(turn.take, Effect.ensuring(Effect.suspend(run), turn.release)))

    const execute = (
      sql: string,
      params: ReadonlyArray<unknown>,
      mode: "rows" | "raw" | "values",
      unprepared: boolean,
      own: boolean
    ): Effect.Effect<any, SqlError.SqlError> =>
      Effect.withFiberRuntime((fiber) => {
        const safeIntegers = Context.get(fiber.currentContext, SqlClient.SafeIntegers)
        const run = () => {
          let statement: Database.Statement
          try {
            statement = unprepared ? db.prepare(sql) : prepare(sql)
          } catch (cause) {
            return Effect.fail(prepareFailed(cause))
          }
          try {
            return Effect.succeed(runNow(statement, params, mode, safeIntegers))
          } catch (cause) {
            return Effect.fail(executeFailed(cause))
          }
        }
        // `own`: the statement belongs to the open transaction. Otherwise it waits for that transaction to end.
        return own || !inTransaction ? run() : afterTransaction(run)
      })

    const rows = (sql: string, params: ReadonlyArray<unknown>, unprepared: boolean, own: boolean, transformRows: Transform) =>
      transformRows === undefined
        ? execute(sql, params, "rows", unprepared, own)
        : Effect.map(execute(sql, params, "rows", unprepared, own), (found: Rows) => transformRows(found))

    const connection = (own: boolean): SqlConnection.Connection => ({
      execute: (sql, params, transformRows: Transform) => rows(sql, params, false, own, transformRows),
      executeRaw: (sql, params) => execute(sql, params, "raw", false, own),
      executeValues: (sql, params) => execute(sql, params, "values", false, own),
      executeUnprepared: (sql, params, transformRows: Transform) => rows(sql, params ?? [], true, own, transformRows),
      // A better-sqlite3 cursor holds the connection busy while it is open, and a stream is read across
      // other fibers' statements: the rows are read at once, then streamed.
      executeStream: (sql, params, transformRows: Transform) =>
        Stream.fromIterableEffect(rows(sql, params, false, own, transformRows))
    })

    const outside = connection(false)
    const inside = connection(true)

    // Uninterruptible for the reason `afterTransaction` gives.
    const transactionAcquirer = Effect.uninterruptible(
      Effect.gen(function*() {
        yield* turn.take
        inTransaction = true
        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => {
            inTransaction = false
            return turn.release
          })
        )
        return inside
      })
    )

    const client = yield* SqlClient.make({
      acquirer: Effect.succeed(outside),
      transactionAcquirer,
      compiler: Statement.makeCompilerSqlite(),
      spanAttributes: [["db.system.name", "sqlite"]]
    })
    yield* DirectStatements.directStatements(client)

    /** Runs BEGIN, COMMIT or ROLLBACK on the connection (prepared once, as every statement is). */
    const control = (sql: string): Effect.Effect<void, SqlError.SqlError> =>
      Effect.suspend(() => {
        try {
          prepare(sql).run()
          return Effect.void
        } catch (cause) {
          return Effect.fail(executeFailed(cause))
        }
      })

    /**
     * Transactions while no tracer is enabled, without the library's span,
     * the scope of its acquirer and the second copy of the context they add
     * (DirectTransactions): the one turn held from BEGIN to the end, so
     * other fibers' statements wait. About 75 µs of CPU less a transaction
     * (docs/performance.md, "Transactions").
     */
    const opened: DirectTransactions.Opened = {
      connection: inside,
      control,
      close: Effect.zipRight(
        Effect.sync(() => {
          inTransaction = false
        }),
        turn.release
      )
    }
    const direct = DirectTransactions.make(
      client.withTransaction,
      Effect.zipRight(
        turn.take,
        Effect.sync(() => {
          inTransaction = true
          return opened
        })
      )
    )
    return Object.assign(client, { withTransaction: direct }) as SqlClient.SqlClient
  })

/** The `SqlClient` on the SQLite database at `config.filename`. */
export const layer = (config: ClientConfig): Layer.Layer<SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.scoped(SqlClient.SqlClient, make(config)).pipe(
    Layer.provide(Reactivity.layer)
  )
