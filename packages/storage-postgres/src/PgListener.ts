/**
 * Notifications of PostgreSQL channels (LISTEN), heard on a connection of
 * the process's own, outside the pool, and handed to plain functions as
 * node-postgres reads them: no stream, fiber or step per notification.
 *
 * Every process listening on a channel hears every notification on it, its
 * own included, so what a notification costs the listener is paid by each
 * process for each one (the reply bus sends a few per reply). Through
 * `PgClient.listen` (a stream) that was about 100 µs of a process's CPU a
 * notification; here it is the handler's own work (docs/performance.md,
 * "Notifications heard on a connection of our own").
 *
 * The connection opens with the first channel listened to. A connection
 * lost while the process lives (the server restarted, the backend was
 * terminated) is opened again at once and every channel listened to again;
 * what was notified in between is not heard (the storage stays the truth:
 * see PgBuses).
 */
import { SqlError } from "@effect/sql"
import { Context, Deferred, Duration, Effect, Layer, Runtime, Schedule, type Scope } from "effect"
import pg from "pg"
import { clientConfig, close, type OwnConnectionConfig, sqlError } from "./internal/ownConnection.js"

/** Listens on channels of the database. */
export class PgListener extends Context.Tag("@hosting/storage-postgres/PgListener")<PgListener, {
  /**
   * Calls `onPayload` with each notification's payload on `channel`, in the
   * order they arrive, until the scope closes. Succeeds once `LISTEN` ran
   * (or, where the connection was just lost, once it is asked again).
   */
  readonly listen: (channel: string, onPayload: (payload: string) => void) => Effect.Effect<void, SqlError.SqlError, Scope.Scope>
}>() {}

/** Where the database is (as for the pool); the connection shows in pg_stat_activity as "<applicationName> listen". */
export interface PgListenerConfig extends OwnConnectionConfig {}

/** The listener on its own connection, opened at the first `listen` and kept open until the layer closes. */
export const layer = (config: PgListenerConfig): Layer.Layer<PgListener> =>
  Layer.scoped(
    PgListener,
    Effect.gen(function*() {
      const options = clientConfig(config, "listen")
      const runtime = yield* Effect.runtime<never>()
      const layerScope = yield* Effect.scope
      /** The handlers of each channel listened to. */
      const channels = new Map<string, Set<(payload: string) => void>>()

      const dispatch = (message: pg.Notification) => {
        const handlers = channels.get(message.channel)
        if (handlers === undefined || message.payload === undefined) return
        for (const handler of handlers) {
          try {
            handler(message.payload)
          } catch (cause) {
            Runtime.runFork(runtime)(Effect.logWarning(`a notification on ${message.channel} could not be handled`, cause))
          }
        }
      }
      const listenOn = (client: pg.Client, channel: string) =>
        Effect.tryPromise({
          try: () => client.query(`LISTEN ${client.escapeIdentifier(channel)}`),
          catch: sqlError(`cannot listen on ${channel}`)
        })

      /** Opens a connection listening on every channel: the connection, and what resolves once it is gone. */
      const open = Effect.gen(function*() {
        const client = new pg.Client(options)
        const gone = yield* Deferred.make<void>()
        client.on("error", () => Deferred.unsafeDone(gone, Effect.void))
        client.on("end", () => Deferred.unsafeDone(gone, Effect.void))
        client.on("notification", dispatch)
        yield* Effect.tryPromise({ try: () => client.connect(), catch: sqlError("cannot open the listening connection") }).pipe(
          Effect.zipRight(Effect.suspend(() => Effect.forEach([...channels.keys()], (channel) => listenOn(client, channel), { discard: true }))),
          Effect.tapError(() => close(client))
        )
        return { client, gone }
      })

      // One change at a time: a `listen`, or the connection opened again (a `listen` meanwhile waits for it).
      const turn = yield* Effect.makeSemaphore(1)
      let held: Effect.Effect.Success<typeof open> | undefined
      yield* Effect.addFinalizer(() => Effect.suspend(() => held === undefined ? Effect.void : close(held.client)))
      // Whenever the connection goes, a new one listening on the same channels, as soon as the database takes it.
      const keep = Effect.gen(function*() {
        yield* Deferred.await(held!.gone)
        yield* Effect.logWarning("the connection listening for notifications was lost; opening it again")
        yield* turn.withPermits(1)(Effect.gen(function*() {
          yield* close(held!.client)
          held = yield* open.pipe(Effect.retry(Schedule.spaced(Duration.millis(100))))
        }))
        yield* Effect.logInfo("listening for notifications again")
      })
      const connected = Effect.suspend(() =>
        held !== undefined
          ? Effect.succeed(held)
          : Effect.tap(open, (opened) =>
            Effect.sync(() => {
              held = opened
            }).pipe(Effect.zipRight(Effect.forkIn(Effect.forever(keep), layerScope))))
      )

      return PgListener.of({
        listen: (channel, onPayload) =>
          Effect.gen(function*() {
            // A handler of its own for each call, so that the same function may listen twice.
            const handler = (payload: string) => onPayload(payload)
            // The first opens the connection; each channel is asked for once.
            yield* turn.withPermits(1)(Effect.gen(function*() {
              const { client, gone } = yield* connected
              const handlers = channels.get(channel)
              if (handlers !== undefined) return void handlers.add(handler)
              channels.set(channel, new Set([handler]))
              yield* listenOn(client, channel).pipe(
                // A connection lost meanwhile listens on the channel when it is opened again.
                Effect.catchAll((error) =>
                  Effect.flatMap(Deferred.isDone(gone), (lost) =>
                    lost ? Effect.void : Effect.zipRight(Effect.sync(() => channels.delete(channel)), Effect.fail(error))))
              )
            }))
            yield* Effect.addFinalizer(() =>
              Effect.suspend(() => {
                const handlers = channels.get(channel)
                if (handlers === undefined || !handlers.delete(handler) || handlers.size > 0) return Effect.void
                channels.delete(channel)
                const client = held?.client
                // Bounded: a connection that no longer answers does not hold up the scope's close.
                return client === undefined ? Effect.void : Effect.ignore(
                  Effect.tryPromise(() => client.query(`UNLISTEN ${client.escapeIdentifier(channel)}`)).pipe(
                    Effect.timeoutOption(Duration.seconds(1))
                  )
                )
              })
            )
          })
      })
    })
  )
