/**
 * The account event stream: replay from the log after the client's last
 * event id (capped), then live events as the log grows, with heartbeats.
 * Every delivered event is read from the log, in id order, so a client
 * never sees a gap or a duplicate between replay and live delivery.
 */
import { Chunk, Clock, Context, DateTime, Deferred, Duration, Effect, ExecutionStrategy, Exit, FiberId, Layer, Option, Queue, Schedule, Scope, Stream } from "effect"
import type { Account } from "./Account.js"
import { PermissionDenied, type StorageError } from "./Errors.js"
import type { StoredEvent } from "./Event.js"
import { EventBus } from "./EventBus.js"
import type { AccountId, AccountName } from "./Ids.js"
import { orFail } from "./internal/lookup.js"
import * as Policy from "./Policy.js"
import { AccountStore, EventLog } from "./Ports.js"
import type { Principal } from "./Principal.js"

/** Settings of the event stream. */
export class EventsConfig extends Context.Reference<EventsConfig>()("@hosting/core/EventsConfig", {
  defaultValue: () => ({
    /** Most events replayed on a reconnect. */
    replayCap: 1000,
    /** Interval of heartbeats (and of the log re-read that covers a lost wake-up). */
    heartbeat: Duration.seconds(25) as Duration.Duration,
    /** How long events are kept. */
    retention: Duration.days(7) as Duration.Duration
  })
}) {}

/** What a stream carries. */
export type StreamItem =
  | { readonly _tag: "Ready"; readonly resync: boolean }
  | { readonly _tag: "Event"; readonly event: StoredEvent }
  | { readonly _tag: "Heartbeat" }

/** What wakes a waiting stream. */
type Signal = "woke" | "beat" | "end"

/** An open stream, as the wake-ups, the heartbeat timer and shutdown see it. */
interface Listener {
  readonly signals: Queue.Queue<Signal>
  /** When its next heartbeat is due (ms on the Clock). */
  deadline: number
  /** Neighbours in the order of heartbeats. */
  previous: Listener | undefined
  next: Listener | undefined
}

/** A read of an account's log after `cursor`, shared by the streams that may use it. */
interface SharedRead {
  readonly cursor: string
  /** When it started, on the service's counter of wake-ups and reads. */
  readonly startedAt: number
  readonly result: Deferred.Deferred<ReadonlyArray<StoredEvent>, StorageError>
}

/** Largest batch read from the log in one query while tailing. */
const batchSize = 500

const decimalId = /^\d{1,18}$/

export class Events extends Effect.Service<Events>()("@hosting/core/Events", {
  scoped: Effect.gen(function*() {
    const accounts = yield* AccountStore
    const log = yield* EventLog
    const bus = yield* EventBus
    const config = yield* EventsConfig
    const serviceScope = yield* Effect.scope
    const interval = Duration.toMillis(config.heartbeat)

    /**
     * Open streams wait on a small queue of their own, fed from outside: the
     * account's wake-ups (one bus subscription per account in this process,
     * shared by its streams), their heartbeats (one timer for all streams) and
     * the end at shutdown. A waiting stream holds no fiber of its own.
     */
    interface Followed {
      readonly listeners: Set<Listener>
      /** Done once the bus subscription is made (joiners meanwhile wait for it). */
      readonly ready: Deferred.Deferred<void>
      /** Holds the bus subscription and its forwarding fiber. */
      scope: Scope.CloseableScope | undefined
      /** The newest log read of the account, which its streams share (see `sharedRead`). */
      latestRead: SharedRead | undefined
    }
    const followed = new Map<AccountId, Followed>()
    let closing = false

    /**
     * Open streams in the order their next heartbeat is due: a list linked
     * both ways, so that a closing stream leaves it at once. Every deadline is
     * `interval` after the stream's start or last heartbeat, so appending
     * keeps the order.
     */
    let first: Listener | undefined
    let last: Listener | undefined
    const append = (listener: Listener) => {
      listener.previous = last
      listener.next = undefined
      if (last === undefined) first = listener
      else last.next = listener
      last = listener
    }
    const unlink = (listener: Listener) => {
      if (listener.previous === undefined) {
        if (first !== listener) return
        first = listener.next
      } else {
        listener.previous.next = listener.next
      }
      if (listener.next === undefined) last = listener.previous
      else listener.next.previous = listener.previous
      listener.previous = undefined
      listener.next = undefined
    }
    let timerRunning = false

    /**
     * Sends each stream its heartbeats, on one fiber for all. It runs while
     * streams are open, on the clock of the stream that started it, and stops
     * when the last one has closed.
     */
    const heartbeatTimer = Effect.gen(function*() {
      while (true) {
        const next = first
        if (next === undefined) {
          timerRunning = false
          return
        }
        const now = yield* Clock.currentTimeMillis
        if (next.deadline > now) {
          yield* Effect.sleep(Duration.millis(next.deadline - now))
          continue
        }
        unlink(next)
        next.signals.unsafeOffer("beat")
        next.deadline = now + interval
        append(next)
      }
    })

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        // Every open stream ends cleanly: its response completes instead of being cut.
        closing = true
        for (const { listeners } of followed.values()) for (const listener of listeners) listener.signals.unsafeOffer("end")
      })
    )

    /** Joins the streams of an account; the account's bus subscription is made by the first and closed by the last. */
    const join = (accountId: AccountId) =>
      Effect.acquireRelease(
        Effect.gen(function*() {
          let entry = followed.get(accountId)
          if (entry === undefined) {
            const created: Followed = { listeners: new Set(), ready: yield* Deferred.make<void>(), scope: undefined, latestRead: undefined }
            followed.set(accountId, created)
            entry = created
            const scope = yield* Scope.fork(serviceScope, ExecutionStrategy.sequential)
            const wakeups = yield* Scope.extend(bus.subscribe(accountId), scope)
            yield* wakeups.take.pipe(
              Effect.tap(() => Effect.sync(() => { for (const listener of created.listeners) listener.signals.unsafeOffer("woke") })),
              Effect.forever,
              // Forked from the uninterruptible acquire: made interruptible again, so the last leaver can stop it.
              Effect.interruptible,
              Effect.forkIn(scope)
            )
            created.scope = scope
            yield* Deferred.succeed(created.ready, undefined)
          } else {
            yield* Deferred.await(entry.ready)
          }
          const listener: Listener = {
            signals: yield* Queue.sliding<Signal>(8),
            deadline: (yield* Clock.currentTimeMillis) + interval,
            previous: undefined,
            next: undefined
          }
          entry.listeners.add(listener)
          append(listener)
          if (!timerRunning) {
            timerRunning = true
            yield* Effect.forkIn(heartbeatTimer.pipe(Effect.withClock(yield* Effect.clock), Effect.interruptible), serviceScope)
          }
          if (closing) listener.signals.unsafeOffer("end")
          return { listener, entry }
        }),
        ({ entry, listener }) =>
          Effect.gen(function*() {
            unlink(listener)
            entry.listeners.delete(listener)
            yield* Queue.shutdown(listener.signals)
            if (entry.listeners.size === 0 && followed.get(accountId) === entry) {
              followed.delete(accountId)
              if (entry.scope !== undefined) yield* Scope.close(entry.scope, Exit.void)
            }
          })
      )

    /**
     * Decides what to replay after `lastEventId`. No id: nothing (the client
     * starts live). An id this log never issued: nothing, with resync. An id
     * older than what retention kept, or more missed events than the cap:
     * the newest `cap` events, with resync.
     */
    const replay = (accountId: AccountId, lastEventId: Option.Option<string>, cap: number) =>
      Effect.gen(function*() {
        const horizon = yield* log.horizon
        const newest = String(horizon.newest)
        if (Option.isNone(lastEventId)) return { events: [], resync: false, cursor: newest }
        const id = lastEventId.value
        if (!decimalId.test(id) || BigInt(id) > horizon.newest) return { events: [], resync: true, cursor: newest }
        const lost = BigInt(id) < horizon.pruned
        const missed = yield* log.after(accountId, lastEventId, cap + 1)
        if (missed.length <= cap) return { events: missed, resync: lost, cursor: missed.at(-1)?.id ?? id }
        const newestMissed = yield* log.latest(accountId, lastEventId, cap)
        return { events: newestMissed, resync: true, cursor: newestMissed.at(-1)!.id }
      })

    /** Everything after the cursor, in batches, oldest first. */
    const readFrom = (accountId: AccountId, cursor: string) =>
      Effect.gen(function*() {
        const out: Array<StoredEvent> = []
        let from = cursor
        while (true) {
          const batch = yield* log.after(accountId, Option.some(from), batchSize)
          out.push(...batch)
          if (batch.length < batchSize) return out
          from = batch.at(-1)!.id
        }
      })

    /**
     * One event wakes every stream of its account, and they all stand at the
     * same cursor: the newest read of an account is shared. A stream may use
     * it when it reads from the same cursor and the read started after the
     * stream's own wake-up (so it includes what woke the stream).
     */
    let tick = 0
    const sharedRead = (entry: Followed, accountId: AccountId, cursor: string, wokeAt: number) =>
      Effect.suspend((): Effect.Effect<ReadonlyArray<StoredEvent>, StorageError> => {
        const latest = entry.latestRead
        if (latest !== undefined && latest.cursor === cursor && latest.startedAt > wokeAt) {
          // A shared read that failed or stopped is not an answer: read alone then.
          return Deferred.await(latest.result).pipe(Effect.catchAllCause(() => readFrom(accountId, cursor)))
        }
        const read: SharedRead = {
          cursor,
          startedAt: ++tick,
          result: Deferred.unsafeMake<ReadonlyArray<StoredEvent>, StorageError>(FiberId.none)
        }
        entry.latestRead = read
        return readFrom(accountId, cursor).pipe(
          Effect.onExit((exit) =>
            Effect.suspend(() => {
              if (Exit.isFailure(exit) && entry.latestRead === read) entry.latestRead = undefined
              return Deferred.done(read.result, exit)
            })
          )
        )
      })

    /** The stream of an account for a member, resuming after `lastEventId`. */
    const stream = Effect.fn("Events.stream")(function*(
      principal: Principal,
      accountName: AccountName,
      lastEventId: Option.Option<string>
    ) {
      // An account that does not exist has no members: the answer is the same 403 as for a non-member.
      const account: Account = yield* accounts.findByName(accountName).pipe(
        orFail(() =>
          new PermissionDenied({ details: `You are not a member of account ${accountName}; following its events needs membership.` })
        )
      )
      yield* Policy.requireMember(principal, account, "following the account's events")
      return Stream.unwrapScoped(Effect.gen(function*() {
        // Join (and so subscribe) before reading the log, so an event committed in between wakes us.
        const { entry, listener } = yield* join(account.id)
        const start = yield* replay(account.id, lastEventId, config.replayCap)
        let cursor = start.cursor
        /**
         * One step of the live part: wait for the next signals, then read
         * what the log has after the cursor (at a heartbeat too: a lost
         * wake-up costs at most one interval). Ends at shutdown.
         */
        const step: Effect.Effect<Chunk.Chunk<StreamItem>, Option.Option<StorageError>> = Effect.gen(function*() {
          const signal = yield* Queue.take(listener.signals)
          const signals = [signal, ...(yield* Queue.takeAll(listener.signals))]
          if (signals.includes("end")) return yield* Effect.fail(Option.none())
          const batch = yield* sharedRead(entry, account.id, cursor, ++tick).pipe(Effect.mapError(Option.some))
          if (batch.length > 0) cursor = batch.at(-1)!.id
          const items: Array<StreamItem> = batch.map((event): StreamItem => ({ _tag: "Event", event }))
          if (signals.includes("beat")) items.push({ _tag: "Heartbeat" })
          return Chunk.unsafeFromArray(items)
        })
        const head: Array<StreamItem> = [
          { _tag: "Ready", resync: start.resync },
          ...start.events.map((event): StreamItem => ({ _tag: "Event", event }))
        ]
        return Stream.concat(Stream.fromIterable(head), Stream.repeatEffectChunkOption(step))
      })) as Stream.Stream<StreamItem, StorageError>
    })

    /** Deletes events older than the retention period. */
    const prune = Effect.fn("Events.prune")(function*() {
      const now = yield* DateTime.now
      return yield* log.prune(DateTime.subtractDuration(now, config.retention))
    })

    /** How many streams are open on this process (for tests and metrics). */
    const open = Effect.sync(() => {
      let count = 0
      for (const { listeners } of followed.values()) count += listeners.size
      return count
    })

    return { stream, prune, openStreams: open } as const
  })
}) {}

/** Prunes the log at start and then every hour, for the life of the layer. */
export const retention = Layer.scopedDiscard(
  Effect.flatMap(Events, (events) =>
    events.prune().pipe(
      Effect.tap((removed) => (removed > 0 ? Effect.logInfo(`event log: ${removed} events past retention deleted`) : Effect.void)),
      Effect.catchAll((error) => Effect.logWarning("event log retention failed", error)),
      Effect.repeat(Schedule.spaced(Duration.hours(1))),
      Effect.forkScoped
    ))
)
