/**
 * What the connections a process holds outside the pool share (the process
 * lock's, the listener's): where they go, how they are named in
 * pg_stat_activity, how their failures read, and how they are closed.
 */
import { SqlError } from "@effect/sql"
import { Duration, Effect, Redacted } from "effect"
import pg from "pg"

/** Where the database is (as for the pool). */
export interface OwnConnectionConfig {
  readonly url: string | Redacted.Redacted
  readonly connectTimeout?: Duration.DurationInput
  /** Shown in pg_stat_activity, with the connection's role after it (default "hosting"). */
  readonly applicationName?: string
}

/** The node-postgres settings of a connection of `role` ("process lock", "listen"). */
export const clientConfig = (config: OwnConnectionConfig, role: string): pg.ClientConfig => ({
  connectionString: typeof config.url === "string" ? config.url : Redacted.value(config.url),
  connectionTimeoutMillis: Duration.toMillis(config.connectTimeout ?? Duration.seconds(5)),
  application_name: `${config.applicationName ?? "hosting"} ${role}`
})

export const sqlError = (message: string) => (cause: unknown) => new SqlError.SqlError({ cause, message })

/** Ends a connection, giving up after a second (a connection that no longer answers does not hold a close up). */
export const close = (client: pg.Client) =>
  Effect.promise(() => client.end().catch(() => undefined)).pipe(Effect.timeoutOption(Duration.seconds(1)), Effect.asVoid)
