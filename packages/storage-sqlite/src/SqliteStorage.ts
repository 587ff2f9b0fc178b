/**
 * Hosting storage on SQLite (better-sqlite3 under an `@effect/sql` client of
 * our own, see internal/client.ts), in WAL mode with foreign keys enforced.
 */
import { SqlClient, SqlError } from "@effect/sql"
import Database from "better-sqlite3"
import { SqlStorage } from "@hosting/storage-sql"
import { Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import * as Checkpointer from "./internal/checkpointer.js"
import * as Client from "./internal/client.js"

/** Where the database lives: a file path, or `:memory:`. */
export interface SqliteStorageConfig {
  readonly filename: string
}

const pragmas = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`PRAGMA foreign_keys = ON`
  yield* sql`PRAGMA busy_timeout = 5000`
  yield* sql`PRAGMA synchronous = NORMAL`
  // A checkpoint copies the pages written since the last one into the database file (and syncs both
  // files). On a file whose log passed 4 MB a thread of its own makes them (internal/checkpointer.ts); this connection's own,
  // at ten times SQLite's default interval (about 40 MB of WAL instead of 4), starts the log over under steady
  // writes (copying what the thread has not) and does it all for a thread that fails. Made here at that
  // interval, a page written many times in between was copied once: about 7 % less CPU per send under load
  // than at SQLite's default.
  yield* sql`PRAGMA wal_autocheckpoint = 10000`
}).pipe(Effect.orDie))

/** The file beside a database whose lock says that a process owns the database. */
const lockFileOf = (filename: string) => `${filename}.lock`

/**
 * Holds a lock that says this process owns the database, until the scope
 * closes. SQLite serves one process: a second one would close the first's
 * streaming replies at its start, and writers of two processes would wait on
 * each other. The lock is SQLite's own exclusive lock on a file of its own
 * beside the database (the database itself stays readable, for backups with
 * `sqlite3 .backup`); the system drops it when the process ends, however it
 * ends, so a crash never blocks the next start.
 */
const ownDatabase = (filename: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        mkdirSync(dirname(filename), { recursive: true })
        const lock = new Database(lockFileOf(filename), { timeout: 0 })
        try {
          // The journal in memory: no second file beside the lock file.
          lock.pragma("journal_mode = MEMORY")
          // An exclusive lock taken in this mode is kept after its transaction.
          lock.pragma("locking_mode = EXCLUSIVE")
          lock.exec("BEGIN EXCLUSIVE; COMMIT")
          return lock
        } catch (cause) {
          lock.close()
          throw cause
        }
      },
      catch: (cause) =>
        new SqlError.SqlError({
          cause,
          message: (cause as { code?: unknown }).code === "SQLITE_BUSY"
            ? `${filename} is in use by another process (a SQLite database serves one process; use Postgres for several)`
            : `cannot lock ${lockFileOf(filename)}: ${String(cause)}`
        })
    }),
    (lock) => Effect.sync(() => lock.close())
  )

const client = (config: SqliteStorageConfig) =>
  config.filename === ":memory:"
    ? Client.layer({ filename: config.filename })
    // Checkpoints on a thread of their own (internal/checkpointer.ts), started once the file is open in WAL mode.
    : Layer.scopedDiscard(Checkpointer.start(config.filename)).pipe(
      Layer.provideMerge(Layer.unwrapScoped(Effect.as(ownDatabase(config.filename), Client.layer({ filename: config.filename }))))
    )

/**
 * Every storage port on a SQLite database, migrated at start; also exposes
 * the SqlClient. On a file it fails at once when another process (or
 * another layer of this one) has the database.
 */
export const layer = (config: SqliteStorageConfig) =>
  SqlStorage.layer.pipe(Layer.provideMerge(pragmas), Layer.provideMerge(client(config)))

/** What SQLite says of a database file (for checks after a crash, and for tests). */
export interface FileCheck {
  /** `PRAGMA integrity_check`: `["ok"]` when the file is sound, else one line per problem. */
  readonly integrity: ReadonlyArray<string>
  /** Rows that break a foreign key (`PRAGMA foreign_key_check`). */
  readonly foreignKeyViolations: number
  readonly journalMode: string
  /** Replies stored as streaming: left by a process that stopped without closing them; the next start closes them. */
  readonly streamingReplies: number
}

/**
 * Checks a database file that no server has open: opens it (which replays
 * its write-ahead log), runs SQLite's integrity and foreign key checks, and
 * closes it. Nothing is written or migrated.
 */
export const checkFile = (filename: string): Effect.Effect<FileCheck, SqlError.SqlError> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const integrity = yield* sql<{ integrity_check: string }>`PRAGMA integrity_check`
    const violations = yield* sql`PRAGMA foreign_key_check`
    const [journal] = yield* sql<{ journal_mode: string }>`PRAGMA journal_mode`
    const [streaming] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM messages WHERE status = 'streaming'`
    return {
      integrity: integrity.map((row) => row.integrity_check),
      foreignKeyViolations: violations.length,
      journalMode: journal?.journal_mode ?? "",
      streamingReplies: Number(streaming?.n ?? 0)
    }
  }).pipe(
    Effect.provide(Client.layer({ filename })),
    Effect.scoped
  )
