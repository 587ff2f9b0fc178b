/**
 * This process as the database knows it: a session-level advisory lock held
 * on a connection of its own, outside the pool, for the life of the layer.
 * The process's reply leases name it (`Ports.LeaseOwner`); when the process
 * dies, the kernel closes its connection, Postgres releases the lock, and
 * any live process closes its replies at its next sweep instead of waiting
 * for their leases to end (SqlConversationStore.closeStreaming).
 *
 * A connection lost while the process lives (the server restarted, a
 * backend was terminated) is opened again and the same lock taken again at
 * once; until then the others see this process as dead.
 */
import { SqlError } from "@effect/sql"
import { Ports } from "@hosting/core"
import { SqlConversationStore } from "@hosting/storage-sql"
import { Deferred, Duration, Effect, Layer, Schedule } from "effect"
import pg from "pg"
import { clientConfig, close, type OwnConnectionConfig, sqlError } from "./internal/ownConnection.js"

/** Where the database is (as for the pool); the connection shows in pg_stat_activity as "<applicationName> process lock". */
export interface PgProcessLockConfig extends OwnConnectionConfig {}

/** Keys of the lock: positive int4, so that `pg_locks.objid` (an oid) shows them as they are. */
const randomKey = () => 1 + Math.floor(Math.random() * 0x7ffffffe)

/** Keys tried before giving up at start; another process holding a random key is already rare. */
const attempts = 20

class LockTaken {
  readonly _tag = "LockTaken"
}

/** The lease owner of this process, held by a session lock on PostgreSQL. */
export const layer = (config: PgProcessLockConfig): Layer.Layer<Ports.LeaseOwner, SqlError.SqlError> =>
  Layer.scoped(
    Ports.LeaseOwner,
    Effect.gen(function*() {
      const options = clientConfig(config, "process lock")

      /**
       * Opens a connection and takes the lock `key` on it: the connection,
       * and what resolves once it is gone (for whatever reason: the lock
       * goes with it). Fails with LockTaken when another session holds it.
       */
      const take = (key: number) =>
        Effect.gen(function*() {
          const client = new pg.Client(options)
          const gone = yield* Deferred.make<void>()
          client.on("error", () => Deferred.unsafeDone(gone, Effect.void))
          client.on("end", () => Deferred.unsafeDone(gone, Effect.void))
          yield* Effect.tryPromise({ try: () => client.connect(), catch: sqlError("cannot open the process lock connection") }).pipe(
            Effect.tapError(() => close(client))
          )
          const result = yield* Effect.tryPromise({
            try: () =>
              client.query<{ held: boolean }>("SELECT pg_try_advisory_lock($1::int4, $2::int4) AS held", [
                SqlConversationStore.processLockSpace,
                key
              ]),
            catch: sqlError("cannot take the process lock")
          }).pipe(Effect.tapError(() => close(client)))
          if (result.rows[0]?.held !== true) {
            yield* close(client)
            return yield* Effect.fail(new LockTaken())
          }
          return { client, gone }
        })

      // A key no other process holds.
      let key = randomKey()
      let held = yield* Effect.suspend(() => take(key)).pipe(
        Effect.tapError((e) =>
          Effect.sync(() => {
            if (e instanceof LockTaken) key = randomKey()
          })
        ),
        Effect.retry({ times: attempts - 1, while: (e) => e instanceof LockTaken }),
        Effect.catchIf((e): e is LockTaken => e instanceof LockTaken, () =>
          Effect.fail(new SqlError.SqlError({ cause: undefined, message: `no free process lock after ${attempts} keys` })))
      )
      yield* Effect.addFinalizer(() => Effect.suspend(() => close(held.client)))

      // Whenever the connection goes, the same lock again, on a new one, as soon as the database takes it.
      const keep = Effect.gen(function*() {
        yield* Deferred.await(held.gone)
        yield* close(held.client)
        yield* Effect.logWarning("the process lock's connection was lost; taking the lock again")
        held = yield* take(key).pipe(Effect.retry(Schedule.spaced(Duration.millis(100))))
        yield* Effect.logInfo("the process lock is held again")
      })
      yield* Effect.forkScoped(Effect.forever(keep))

      return Ports.LeaseOwner.of({ name: SqlConversationStore.processOwner(key) })
    })
  )
