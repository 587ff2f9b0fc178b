/**
 * The account event stream: replay from the log after the client's last
 * event id (capped), then live events as the log grows, with heartbeats.
 * Every delivered event is read from the log, in id order, so a client
 * never sees a gap or a duplicate between replay and live delivery.
 */
import { Context, DateTime, Deferred, Duration, Effect, Layer, Option, Schedule, Stream } from "effect"
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

/** Largest batch read from the log in one query while tailing. */
const batchSize = 500

const decimalId = /^\d{1,18}$/

export class Events extends Effect.Service<Events>()("@hosting/core/Events", {
  scoped: Effect.gen(function*() {
    const accounts = yield* AccountStore
    const log = yield* EventLog
    const bus = yield* EventBus
    const config = yield* EventsConfig
    // Completed when the service shuts down: every open stream then ends cleanly.
    const shutdown = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(shutdown, undefined))

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
        // Subscribe before reading the log, so an event committed in between wakes us.
        const wakeups = yield* bus.subscribe(account.id)
        const start = yield* replay(account.id, lastEventId, config.replayCap)
        let cursor = start.cursor
        const live = Stream.repeatEffect(
          wakeups.take.pipe(
            // A lost wake-up costs at most one heartbeat interval.
            Effect.timeout(config.heartbeat),
            Effect.ignore,
            Effect.zipRight(Effect.suspend(() => readFrom(account.id, cursor))),
            Effect.tap((batch) => Effect.sync(() => {
              if (batch.length > 0) cursor = batch.at(-1)!.id
            }))
          )
        ).pipe(Stream.flattenIterables, Stream.map((event): StreamItem => ({ _tag: "Event", event })))
        const heartbeats = Stream.fromSchedule(Schedule.spaced(config.heartbeat)).pipe(
          Stream.map((): StreamItem => ({ _tag: "Heartbeat" }))
        )
        const head: Array<StreamItem> = [
          { _tag: "Ready", resync: start.resync },
          ...start.events.map((event): StreamItem => ({ _tag: "Event", event }))
        ]
        return Stream.concat(Stream.fromIterable(head), Stream.merge(live, heartbeats, { haltStrategy: "either" })).pipe(
          Stream.interruptWhen(Deferred.await(shutdown))
        )
      })) as Stream.Stream<StreamItem, StorageError>
    })

    /** Deletes events older than the retention period. */
    const prune = Effect.fn("Events.prune")(function*() {
      const now = yield* DateTime.now
      return yield* log.prune(DateTime.subtractDuration(now, config.retention))
    })

    return { stream, prune } as const
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
