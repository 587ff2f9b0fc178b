/**
 * The account event stream: replay from the log after the client's last
 * event id (capped), then live events as the log grows, with heartbeats.
 * Every delivered event is read from the log, in id order, so a client
 * never sees a gap or a duplicate between replay and live delivery.
 *
 * Streams are pushed to, not pulled: one fiber per followed account reads
 * the log once per wake-up for all its streams standing at the same cursor
 * and hands the same batch to each of them, so an open stream costs a few
 * plain objects and no fiber of its own.
 */
import { Context, DateTime, Deferred, Duration, Effect, ExecutionStrategy, Exit, Layer, Option, Queue, Schedule, Scope, type Stream } from "effect"
import type { Account } from "../model/Account.js"
import type { StoredEvent } from "../model/Event.js"
import { EventBus } from "../ports/EventBus.js"
import type { AccountId, AccountName } from "../model/Ids.js"
import * as Heartbeats from "../internal/heartbeats.js"
import { orFail } from "../internal/lookup.js"
import * as Policy from "../model/Policy.js"
import { AccountStore, EventLog } from "../ports/Ports.js"
import type { Principal } from "../model/Principal.js"
import { type Receiver, type Subscription, toStream } from "../runtime/Receiver.js"
import * as Metrics from "../runtime/Metrics.js"
import * as Tracing from "../runtime/Tracing.js"

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

/**
 * The heartbeat, one array for every stream: a receiver that encodes what
 * it is given may keep the encoding by identity.
 */
const heartbeat: ReadonlyArray<StreamItem> = [{ _tag: "Heartbeat" }]

/** Streams of an account that stand at the same cursor: one log read serves them all. */
interface Group {
  cursor: string
  readonly members: Set<Listener>
}

/** An open stream, as the account's reader, the heartbeat timer and shutdown see it. */
interface Listener {
  readonly receiver: Receiver<StreamItem>
  /** The id of the last event it was given. */
  cursor: string
  /** Its group; none while it replays or while its receiver asked for a pause. */
  group: Group | undefined
  paused: boolean
  /** Its place on the heartbeat timer. */
  readonly beats: Heartbeats.Beating
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
    const heartbeats = Heartbeats.make(config.heartbeat, serviceScope)

    /**
     * The streams of an account followed on this process, with one bus
     * subscription and one reader fiber for all of them.
     */
    interface Followed {
      readonly listeners: Set<Listener>
      /** Listeners that take part in live delivery, by cursor. */
      readonly groups: Map<string, Group>
      /** Wakes the reader: the bus's wake-ups, and a stream that needs a read of its own cursor. */
      readonly wake: Queue.Queue<void>
      /** Done once the bus subscription is made (joiners meanwhile wait for it). */
      readonly ready: Deferred.Deferred<void>
      /** Holds the bus subscription and the reader. */
      scope: Scope.CloseableScope | undefined
    }
    const followed = new Map<AccountId, Followed>()
    let closing = false

    /** Hands items to a stream; a receiver that throws is a bug of its own and must not stop the others. */
    const give = (listener: Listener, items: ReadonlyArray<StreamItem>) => {
      try {
        return listener.receiver.push(items)
      } catch {
        return true
      }
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        // Every open stream ends cleanly: its response completes instead of being cut.
        closing = true
        for (const { listeners } of followed.values()) {
          for (const listener of listeners) {
            try {
              listener.receiver.end()
            } catch {
              // Ending the others matters more.
            }
          }
        }
      })
    )

    /** Puts a stream into live delivery at its cursor. */
    const enter = (entry: Followed, listener: Listener) => {
      let group = entry.groups.get(listener.cursor)
      // Streams already at this cursor are served by the reader: this one is served with them.
      const covered = group !== undefined
      if (group === undefined) {
        group = { cursor: listener.cursor, members: new Set() }
        entry.groups.set(listener.cursor, group)
      }
      group.members.add(listener)
      listener.group = group
      if (!covered) entry.wake.unsafeOffer(undefined)
    }

    /** Takes a stream out of live delivery (it pauses or leaves). */
    const exit = (entry: Followed, listener: Listener) => {
      const group = listener.group
      if (group === undefined) return
      listener.group = undefined
      group.members.delete(listener)
      if (group.members.size === 0 && entry.groups.get(group.cursor) === group) entry.groups.delete(group.cursor)
    }

    /**
     * Gives the events read after `cursor` to every stream standing there
     * now (including any that joined during the read), and moves them to the
     * new cursor together.
     */
    const deliver = (entry: Followed, cursor: string, events: ReadonlyArray<StoredEvent>) => {
      const group = entry.groups.get(cursor)
      if (group === undefined || events.length === 0) return
      const next = events.at(-1)!.id
      const now = Date.now()
      for (const event of events) Metrics.observe(Metrics.eventDeliveryLag, (now - event.created_at.epochMillis) / 1000)
      const items = events.map((event): StreamItem => ({ _tag: "Event", event }))
      entry.groups.delete(cursor)
      let target = entry.groups.get(next)
      if (target === undefined) {
        group.cursor = next
        entry.groups.set(next, group)
        target = group
      }
      for (const listener of group.members) {
        listener.cursor = next
        if (target !== group) {
          target.members.add(listener)
          listener.group = target
        }
        if (!give(listener, items)) {
          exit(entry, listener)
          listener.paused = true
        }
      }
    }

    /** Everything after the cursor, in batches, oldest first. */
    const readFrom = Effect.fnUntraced(function*(accountId: AccountId, cursor: string) {
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
     * The reader of an account: at each wake-up, and at least once per
     * heartbeat interval (which covers a lost wake-up), reads the log after
     * each cursor its streams stand at and delivers. A failed read is logged
     * and retried at the next round: the streams keep their cursors.
     */
    const reader = Effect.fnUntraced(function*(accountId: AccountId, entry: Followed) {
      while (true) {
        yield* Queue.take(entry.wake).pipe(Effect.timeoutOption(config.heartbeat))
        yield* Queue.takeAll(entry.wake)
        for (const cursor of [...entry.groups.keys()]) {
          const events = yield* readFrom(accountId, cursor).pipe(
            Effect.catchAll((error) =>
              Effect.as(Effect.logWarning("event stream: reading the log failed; the next round retries", error), [])
            )
          )
          deliver(entry, cursor, events)
        }
      }
    })

    /** A stream leaves; the last of an account closes the account's subscription and reader. */
    const leave = (accountId: AccountId, entry: Followed, listener: Listener) => {
      heartbeats.remove(listener.beats)
      exit(entry, listener)
      if (entry.listeners.delete(listener)) Metrics.add(Metrics.eventStreamsOpen, -1)
      if (entry.listeners.size === 0 && followed.get(accountId) === entry) {
        followed.delete(accountId)
        if (entry.scope !== undefined) return Scope.close(entry.scope, Exit.void)
      }
      return Effect.void
    }

    /** Joins the streams of an account; the account's bus subscription and reader are made by the first and closed by the last. */
    const join = Effect.fnUntraced(
      function*(accountId: AccountId, receiver: Receiver<StreamItem>) {
        let entry = followed.get(accountId)
        if (entry === undefined) {
          const created: Followed = {
            listeners: new Set(),
            groups: new Map(),
            wake: yield* Queue.sliding<void>(1),
            ready: yield* Deferred.make<void>(),
            scope: undefined
          }
          followed.set(accountId, created)
          entry = created
          const scope = yield* Scope.fork(serviceScope, ExecutionStrategy.sequential)
          const wakeups = yield* Scope.extend(bus.subscribe(accountId), scope)
          // Forked from the uninterruptible join: made interruptible again, so the last leaver can stop them.
          yield* wakeups.take.pipe(
            Effect.tap(() => Effect.sync(() => created.wake.unsafeOffer(undefined))),
            Effect.forever,
            Effect.interruptible,
            Effect.forkIn(scope)
          )
          yield* reader(accountId, created).pipe(Effect.interruptible, Effect.forkIn(scope))
          created.scope = scope
          yield* Deferred.succeed(created.ready, undefined)
        } else {
          yield* Deferred.await(entry.ready)
        }
        const joined = entry
        const listener: Listener = {
          receiver,
          cursor: "",
          group: undefined,
          paused: false,
          // A paused stream's client is not reading: its heartbeat would only pile up.
          beats: Heartbeats.beating(() => listener.paused || give(listener, heartbeat))
        }
        entry.listeners.add(listener)
        Metrics.add(Metrics.eventStreamsOpen, 1)
        yield* heartbeats.add(listener.beats)
        // Added to the scope directly, so that the finalizer keeps nothing of the caller's fiber (a request's context, say).
        yield* Scope.addFinalizer(yield* Effect.scope, Effect.suspend(() => leave(accountId, joined, listener)))
        return { listener, entry: joined }
      },
      Effect.uninterruptible
    )

    /**
     * Decides what to replay after `lastEventId`. No id: nothing (the client
     * starts live). An id this log never issued: nothing, with resync. An id
     * older than what retention kept, or more missed events than the cap:
     * the newest `cap` events, with resync.
     */
    const replay = Effect.fnUntraced(
      function*(accountId: AccountId, lastEventId: Option.Option<string>, cap: number) {
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
      }
    )

    /** The account, for a member. */
    const authorize = Effect.fnUntraced(
      function*(principal: Principal, accountName: AccountName) {
        // An account that does not exist has no members: the answer is the same 403 as for a non-member.
        const account: Account = yield* accounts.findByName(accountName).pipe(
          orFail(() => Policy.notMember(accountName, "following its events"))
        )
        yield* Policy.requireMember(principal, account, "following the account's events")
        return account
      }
    )

    /** Follows an account (see `follow`) for a caller already authorized. */
    const followAccount = Effect.fnUntraced(
      function*(account: Account, lastEventId: Option.Option<string>, receiver: Receiver<StreamItem>) {
        // Join (and so subscribe) before reading the log, so an event committed in between wakes the reader.
        const { entry, listener } = yield* join(account.id, receiver)
        const start = yield* replay(account.id, lastEventId, config.replayCap)
        listener.cursor = start.cursor
        const head: Array<StreamItem> = [
          { _tag: "Ready", resync: start.resync },
          ...start.events.map((event): StreamItem => ({ _tag: "Event", event }))
        ]
        if (give(listener, head)) enter(entry, listener)
        else listener.paused = true
        if (closing) receiver.end()
        const subscription: Subscription = {
          resume: () => {
            if (!listener.paused || !entry.listeners.has(listener)) return
            listener.paused = false
            enter(entry, listener)
          }
        }
        return subscription
      }
    )

    /**
     * Follows an account for a member, resuming after `lastEventId`, until
     * the scope closes: the receiver is given `Ready` and the replay, then
     * every new event and a heartbeat each interval, and is ended when the
     * service stops. When it answers `false` it is given nothing more (but
     * its cursor is kept) until it calls `resume`; it then gets what it
     * missed from the log.
     */
    const follow = Tracing.fn("Events.follow")(function*(
      principal: Principal,
      accountName: AccountName,
      lastEventId: Option.Option<string>,
      receiver: Receiver<StreamItem>
    ) {
      return yield* followAccount(yield* authorize(principal, accountName), lastEventId, receiver)
    })

    /** Deletes events older than the retention period. */
    const prune = Tracing.fn("Events.prune")(function*() {
      const now = yield* DateTime.now
      return yield* log.prune(DateTime.subtractDuration(now, config.retention))
    })

    /** How many streams are open on this process (for tests and metrics). */
    const open = Effect.sync(() => {
      let count = 0
      for (const { listeners } of followed.values()) count += listeners.size
      return count
    })

    return { follow, prune, openStreams: open } as const
  })
}) {}

/** The stream of an account for a member, resuming after `lastEventId`, as a `Stream` (a view of `follow`): it fails as `follow` does. */
export const stream = (
  events: Events,
  principal: Principal,
  accountName: AccountName,
  lastEventId: Option.Option<string>
): Stream.Stream<StreamItem, Effect.Effect.Error<ReturnType<Events["follow"]>>> =>
  toStream((receiver: Receiver<StreamItem>) => events.follow(principal, accountName, lastEventId, receiver))

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
