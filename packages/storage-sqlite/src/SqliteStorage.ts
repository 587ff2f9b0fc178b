/**
 * Hosting storage on SQLite (better-sqlite3 through @effect/sql-sqlite-node),
 * in WAL mode with foreign keys enforced.
 */
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { SqlStorage } from "@hosting/storage-sql"
import { Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"

/** Where the database lives: a file path, or `:memory:`. */
export interface SqliteStorageConfig {
  readonly filename: string
}

const pragmas = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`PRAGMA foreign_keys = ON`
  yield* sql`PRAGMA busy_timeout = 5000`
  yield* sql`PRAGMA synchronous = NORMAL`
}).pipe(Effect.orDie))

const client = (config: SqliteStorageConfig) =>
  Layer.unwrapEffect(Effect.sync(() => {
    if (config.filename !== ":memory:") mkdirSync(dirname(config.filename), { recursive: true })
    return SqliteClient.layer({ filename: config.filename })
  }))

/** Every storage port on a SQLite database, migrated at start; also exposes the SqlClient. */
export const layer = (config: SqliteStorageConfig) =>
  SqlStorage.layer.pipe(Layer.provideMerge(pragmas), Layer.provideMerge(client(config)))
