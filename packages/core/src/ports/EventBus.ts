/**
 * Wake-up signals for event-stream subscribers. A signal carries no event:
 * the subscriber reads what it delivers from the EventLog, so a lost or
 * merged signal can only delay delivery, never drop or repeat an event.
 */
import { Context, Effect, Layer, Queue, type Scope } from "effect"
import * as Members from "../internal/members.js"
import type { AccountId } from "../model/Ids.js"

/** A subscription: `take` waits for the next signal; signals that pile up collapse into one. */
export interface Wakeups {
  readonly take: Effect.Effect<void>
}

export class EventBus extends Context.Tag("@hosting/core/EventBus")<EventBus, {
  /** Wakes the subscribers of each account (called after the transaction that wrote the events commits). */
  readonly publish: (accounts: ReadonlyArray<AccountId>) => Effect.Effect<void>
  /** Subscribes to one account's signals for the life of the scope. */
  readonly subscribe: (account: AccountId) => Effect.Effect<Wakeups, never, Scope.Scope>
  /** How many subscriptions are open (for tests and metrics). */
  readonly subscribers: Effect.Effect<number>
}>() {}

/**
 * Signals within one process: each account keeps the set of its subscribers'
 * queues. Buses that span processes deliver into one of these.
 */
export const makeLocal = (): EventBus["Type"] => {
  const subscribers = Members.make<AccountId, Queue.Queue<void>>()
  return EventBus.of({
    publish: (accounts) =>
      Effect.sync(() => {
        for (const account of new Set(accounts)) {
          // One pending signal is enough: the reader drains the log when it wakes.
          for (const queue of subscribers.of(account)) queue.unsafeOffer(undefined)
        }
      }),
    subscribe: (account) =>
      Effect.acquireRelease(Queue.sliding<void>(1), Queue.shutdown).pipe(
        Effect.tap((queue) => subscribers.add(account, queue)),
        Effect.map((queue): Wakeups => ({ take: Queue.take(queue) }))
      ),
    subscribers: subscribers.count
  })
}

/** The bus of one process. */
export const layerLocal: Layer.Layer<EventBus> = Layer.sync(EventBus, makeLocal)
