/**
 * Hosting storage on PostgreSQL through @effect/sql-pg: the repositories and
 * migrations of @hosting/storage-sql on a connection pool.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Metrics } from "@hosting/core"
import { DirectStatements, SqlStorage } from "@hosting/storage-sql"
import { Context, Duration, Effect, Layer, Redacted, Schedule } from "effect"
import * as Pg from "pg"
import { directTransactions } from "./internal/directTransactions.js"
import * as PgListener from "./PgListener.js"
import * as PgProcessLock from "./PgProcessLock.js"

/** Where the database is and how the pool behaves. */
export interface PostgresStorageConfig {
  /** `postgres://user:password@host:port/database` (kept redacted in logs). */
  readonly url: string | Redacted.Redacted
  /** Most connections the pool opens (default 10). */
  readonly maxConnections?: number
  /** How long an idle connection stays open (default 30 s). */
  readonly idleTimeout?: Duration.DurationInput
  /** How long opening a connection may take (default 5 s). */
  readonly connectTimeout?: Duration.DurationInput
  /** Shown in pg_stat_activity (default "hosting"). */
  readonly applicationName?: string
}

/** How often the pool's gauges are brought up to date. */
const poolSampleInterval = Duration.seconds(1)

/**
 * Reports the pool's connections (`hosting_database_pool_connections`, by
 * state) every `poolSampleInterval` while the scope lives; what it added
 * is taken back when the scope closes.
 */
const samplePool = (pool: Pg.Pool) =>
  Effect.gen(function*() {
    let last = { total: 0, idle: 0, waiting: 0 }
    const sample = Effect.sync(() => {
      const now = { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }
      Metrics.addPool({ total: now.total - last.total, idle: now.idle - last.idle, waiting: now.waiting - last.waiting })
      last = now
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => Metrics.addPool({ total: -last.total, idle: -last.idle, waiting: -last.waiting })))
    yield* Effect.forkScoped(Effect.repeat(sample, Schedule.spaced(poolSampleInterval)))
  })

/**
 * The PgClient (and SqlClient) of a configuration, on a pool of ours (the
 * settings PgClient.layer would give it), so that its use can be measured.
 */
export const client = (config: PostgresStorageConfig) => Layer.unwrapEffect(Effect.sync(() => clientOnPool(config)))

/** The client's layer for one build: `made` is the pool that build makes. */
const clientOnPool = (config: PostgresStorageConfig) => {
  // The pool the client is made on, for its transactions (set once the pool is made).
  let made: Pg.Pool | undefined
  const connectTimeout = config.connectTimeout ?? Duration.seconds(5)
  const acquire = Effect.acquireRelease(
    Effect.sync(() => {
      const pool = new Pg.Pool({
        connectionString: Redacted.value(typeof config.url === "string" ? Redacted.make(config.url) : config.url),
        max: config.maxConnections ?? 10,
        idleTimeoutMillis: Duration.toMillis(config.idleTimeout ?? Duration.seconds(30)),
        connectionTimeoutMillis: Duration.toMillis(connectTimeout),
        application_name: config.applicationName ?? "hosting"
      })
      // An idle connection that fails is dropped by the pool; the next query opens another.
      pool.on("error", () => {})
      return pool
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(Duration.seconds(1)))
  ).pipe(
    // As PgClient.layer does: the start fails when the database does not answer.
    Effect.tap((pool) =>
      Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError.SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: connectTimeout,
          onTimeout: () => new SqlError.SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        })
      )
    ),
    Effect.tap(samplePool),
    Effect.tap((pool) => {
      made = pool
    })
  )
  // While no tracer is enabled, statements run on the pool with no span and no scope around them (DirectStatements),
  // and transactions on a client of the pool with neither (internal/directTransactions).
  return Layer.tap(
    PgClient.layerFromPool({ acquire, applicationName: config.applicationName ?? "hosting" }),
    (context) => {
      const sql = Context.get(context, SqlClient.SqlClient)
      return DirectStatements.directStatements(sql).pipe(
        Effect.tap(() => {
          if (made !== undefined) directTransactions(sql, made)
        })
      )
    }
  )
}

/**
 * Every storage port on a PostgreSQL database, migrated at start, this
 * process's lease owner (a session lock the database releases when the
 * process dies, see PgProcessLock), and the listener the buses hear
 * notifications with (PgListener); also exposes the PgClient and SqlClient.
 */
export const layer = (config: PostgresStorageConfig) =>
  Layer.mergeAll(SqlStorage.layer, PgProcessLock.layer(config), PgListener.layer(config)).pipe(Layer.provideMerge(client(config)))
