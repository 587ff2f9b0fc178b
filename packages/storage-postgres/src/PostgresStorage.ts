/**
 * Hosting storage on PostgreSQL through @effect/sql-pg: the repositories and
 * migrations of @hosting/storage-sql on a connection pool.
 */
import { PgClient } from "@effect/sql-pg"
import { SqlStorage } from "@hosting/storage-sql"
import { Duration, Layer, Redacted } from "effect"
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

/** The PgClient (and SqlClient) of a configuration. */
export const client = (config: PostgresStorageConfig) =>
  PgClient.layer({
    url: typeof config.url === "string" ? Redacted.make(config.url) : config.url,
    maxConnections: config.maxConnections ?? 10,
    idleTimeout: config.idleTimeout ?? Duration.seconds(30),
    connectTimeout: config.connectTimeout ?? Duration.seconds(5),
    applicationName: config.applicationName ?? "hosting"
  })

/**
 * Every storage port on a PostgreSQL database, migrated at start, and this
 * process's lease owner (a session lock the database releases when the
 * process dies, see PgProcessLock); also exposes the PgClient and SqlClient.
 */
export const layer = (config: PostgresStorageConfig) =>
  Layer.merge(SqlStorage.layer, PgProcessLock.layer(config)).pipe(Layer.provideMerge(client(config)))
