/**
 * The event and reply buses across server processes, on PostgreSQL
 * LISTEN/NOTIFY. Each process listens once per channel and hands what
 * arrives to its local bus, so a subscriber on any process sees every
 * publication. An event's notification comes back to its own process the
 * same way; a reply's is handed to the local bus when it is published (its
 * streams on this process hear it without a round trip to the database),
 * and the copy that comes back is dropped.
 *
 * Notifications are sent in order on one reserved connection: chunks of a
 * reply arrive in the order they were published. They are heard on the
 * process's listening connection (PgListener) and handed on in plain code,
 * without a step per notification: every process hears every one. The
 * storage stays the truth: an event notification only wakes readers of the
 * event log, and a reply notification too large for NOTIFY is re-read from
 * storage.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Conversation, EventBus, type Ids, Ports, ReplyBus } from "@hosting/core"
import { Chunk, Deferred, Duration, Effect, Exit, Layer, Option, Queue, Runtime, Schedule, Stream } from "effect"
import * as PgListener from "./PgListener.js"

/** Channel names; a deployment may run several platforms on one database by changing the prefix. */
export interface PgBusOptions {
  readonly channelPrefix?: string
}

/** NOTIFY payloads must stay under 8000 bytes; this leaves room for the envelope. */
const maxPayloadBytes = 7000
/** Characters of a reply chunk per notification: even at 6 bytes a character (JSON escapes) it fits. */
const chunkChars = 1000

/**
 * Sends notifications in order on one connection held for the life of the
 * layer, and listens on a channel: `onPayload` receives every notification
 * in the order they arrive, and the layer is ready only once a probe sent
 * by this process has come back (LISTEN is active, so nothing published
 * after start is missed). Several payloads go out in one statement, in
 * their order (Postgres delivers a transaction's notifications in the
 * order they were sent).
 *
 * With a `PgListener` (PostgresStorage's layer gives one), notifications are
 * handed to `onPayload` as they are read; without one, through
 * `PgClient.listen`, at a stream's cost per notification.
 */
const channel = (name: string, onPayload: (payload: string) => void) =>
  Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    const sql = yield* SqlClient.SqlClient
    const connection = yield* sql.reserve
    const turn = yield* Effect.makeSemaphore(1)
    const notifyAll = (payloads: ReadonlyArray<string>) =>
      turn.withPermits(1)(
        payloads.length === 1
          ? connection.execute("SELECT pg_notify($1, $2)", [name, payloads[0]], undefined)
          : connection.execute(
            "SELECT pg_notify($1, payload) FROM unnest($2::text[]) WITH ORDINALITY AS sent(payload, n) ORDER BY n",
            [name, payloads],
            undefined
          )
      ).pipe(Effect.catchAll((error) => Effect.logWarning(`notification on ${name} failed`, error)))
    const notify = (payload: string) => notifyAll([payload])
    const probe = `${probePrefix}${globalThis.crypto.randomUUID()}`
    const ready = yield* Deferred.make<void>()
    const heard = (payload: string) => {
      // Every process probes its channel at start; another's probe is not for us.
      if (payload === probe) Deferred.unsafeDone(ready, Exit.void)
      else if (!payload.startsWith(probePrefix)) onPayload(payload)
    }
    const listener = yield* Effect.serviceOption(PgListener.PgListener)
    if (Option.isSome(listener)) {
      yield* listener.value.listen(name, heard)
    } else {
      yield* pg.listen(name).pipe(
        Stream.runForEach((payload) => Effect.sync(() => heard(payload))),
        Effect.catchAll((error) => Effect.logError(`listening on ${name} failed`, error)),
        Effect.forkScoped
      )
    }
    yield* notify(probe).pipe(
      Effect.zipRight(Deferred.await(ready).pipe(Effect.timeoutFail({ duration: Duration.millis(250), onTimeout: () => "not yet" }))),
      Effect.retry(Schedule.recurs(40)),
      Effect.orDieWith(() => new Error(`LISTEN ${name} did not become active`))
    )
    return { notify, notifyAll }
  })

/** Most notifications sent in one statement. */
const maxBatch = 256

/** How a channel's start probe begins; no notification of a bus begins so (they are JSON). */
const probePrefix = "probe:"

/** Groups of account ids whose JSON stays under the payload limit. */
const batches = (ids: ReadonlyArray<string>): ReadonlyArray<ReadonlyArray<string>> => {
  const out: Array<Array<string>> = [[]]
  let size = 2
  for (const id of ids) {
    if (size + id.length + 3 > maxPayloadBytes && out.at(-1)!.length > 0) {
      out.push([])
      size = 2
    }
    out.at(-1)!.push(id)
    size += id.length + 3
  }
  return out.filter((b) => b.length > 0)
}

/** The EventBus across processes: a publication wakes the account's subscribers on every process. */
export const eventBus = (options: PgBusOptions = {}): Layer.Layer<EventBus.EventBus, SqlError.SqlError, PgClient.PgClient | SqlClient.SqlClient> =>
  Layer.scoped(
    EventBus.EventBus,
    Effect.gen(function*() {
      const local = EventBus.makeLocal()
      const run = Runtime.runFork(yield* Effect.runtime<never>())
      const { notifyAll } = yield* channel(`${options.channelPrefix ?? "hosting"}_events`, (payload) => {
        let accounts: ReadonlyArray<Ids.AccountId>
        try {
          accounts = JSON.parse(payload)
        } catch {
          return void run(Effect.logWarning("an event notification that is not a list of accounts was ignored"))
        }
        run(local.publish(accounts))
      })
      return EventBus.EventBus.of({
        publish: (accounts) => {
          const payloads = batches([...new Set(accounts)]).map((batch) => JSON.stringify(batch))
          return payloads.length === 0 ? Effect.void : notifyAll(payloads)
        },
        subscribe: local.subscribe,
        subscribers: local.subscribers
      })
    })
  )

interface Envelope {
  /**
   * The publishing bus (a process's): it hands its publications to its own listeners at once, and drops their
   * copy unread (the first key of every envelope, so that its copies are known by how they begin).
   */
  readonly p?: string
  /** The conversation. */
  readonly c: string
  readonly e: ReplyBus.ReplyEvent | { readonly _tag: "CompletedStored"; readonly message_id: Conversation.MessageId }
}

/** A reply event as notifications: long chunks split by offset, long completions sent as "read it from storage". */
const envelopes = (publisher: string, conversation: string, event: ReplyBus.ReplyEvent): ReadonlyArray<string> => {
  switch (event._tag) {
    case "Delta": {
      const out: Array<string> = []
      for (let at = 0; at < event.delta.length; at += chunkChars) {
        const part: ReplyBus.ReplyEvent = { ...event, offset: event.offset + at, delta: event.delta.slice(at, at + chunkChars) }
        out.push(JSON.stringify({ p: publisher, c: conversation, e: part } satisfies Envelope))
      }
      return out
    }
    case "Completed": {
      const whole = JSON.stringify({ p: publisher, c: conversation, e: event } satisfies Envelope)
      return [
        Buffer.byteLength(whole) <= maxPayloadBytes
          ? whole
          : JSON.stringify({ p: publisher, c: conversation, e: { _tag: "CompletedStored", message_id: event.message_id } } satisfies Envelope)
      ]
    }
    case "Failed":
      return [JSON.stringify({ p: publisher, c: conversation, e: { ...event, error: event.error.slice(0, chunkChars) } } satisfies Envelope)]
    case "CancelRequested":
      return [JSON.stringify({ p: publisher, c: conversation, e: event } satisfies Envelope)]
  }
}

/**
 * The ReplyBus across processes: the chunks a process receives from an agent
 * reach the reply streams open on every process, in order.
 */
export const replyBus = (
  options: PgBusOptions = {}
): Layer.Layer<ReplyBus.ReplyBus, SqlError.SqlError, PgClient.PgClient | SqlClient.SqlClient | Ports.ConversationStore> =>
  Layer.scoped(
    ReplyBus.ReplyBus,
    Effect.gen(function*() {
      const local = ReplyBus.makeLocal(yield* Effect.runtime<never>())
      const conversations = yield* Ports.ConversationStore
      /** This bus among the publishers on the channel. */
      const self = globalThis.crypto.randomUUID()
      /** How this bus's own envelopes begin (`envelopes` writes the publisher first): their copies are dropped unread. */
      const ownEnvelope = `{"p":${JSON.stringify(self)},`
      const run = Runtime.runFork(yield* Effect.runtime<never>())
      const warnUndelivered = (cause: unknown) => Effect.logWarning("a reply notification could not be delivered", cause)
      const undelivered = (cause: unknown) => void run(warnUndelivered(cause))
      /** Notifications heard while a completion is read from storage: they follow it, in their order. */
      let waiting: Array<string> | undefined
      /** Hands a notification of another process on to this process's listeners, in the order they were heard. */
      const deliver = (payload: string): void => {
        if (waiting !== undefined) return void waiting.push(payload)
        // Heard by this process's listeners when it was published.
        if (payload.startsWith(ownEnvelope)) return
        try {
          const { c, e } = JSON.parse(payload) as Envelope
          const conversation = Conversation.ConversationId.make(c)
          if (e._tag !== "CompletedStored") return local.publish(conversation, e)
          // Too large to notify: the completed reply is already stored.
          waiting = []
          run(conversations.messages(conversation).pipe(
            Effect.map((messages) => {
              const stored = messages.find((m) => m.message_id === e.message_id)
              if (stored !== undefined) {
                local.publish(conversation, { _tag: "Completed", message_id: e.message_id, content: stored.content, trace_id: stored.trace_id })
              }
            }),
            Effect.catchAllCause(warnUndelivered),
            Effect.ensuring(Effect.sync(() => {
              const next = waiting ?? []
              waiting = undefined
              for (const payload of next) deliver(payload)
            }))
          ))
        } catch (cause) {
          undelivered(cause)
        }
      }
      const { notifyAll } = yield* channel(`${options.channelPrefix ?? "hosting"}_replies`, deliver)
      // Publications wait in one queue, in order, for the one fiber that sends them: a reply's chunks are published
      // from plain code as they arrive, and no publisher waits for a notification's round trip. What gathered
      // during a round trip goes out together in the next statement, so the queue never outgrows the load.
      const outbox = yield* Queue.unbounded<string>()
      const sendWaiting = (payloads: Chunk.Chunk<string>) => notifyAll(Chunk.toReadonlyArray(payloads))
      yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.takeBetween(outbox, 1, maxBatch), sendWaiting)))
      // At the end, what is still waiting goes out before the connection is given back.
      yield* Effect.addFinalizer(() =>
        Effect.flatMap(Queue.takeAll(outbox), (payloads) => Chunk.isEmpty(payloads) ? Effect.void : sendWaiting(payloads))
      )
      return ReplyBus.ReplyBus.of({
        publish: (conversation, event) => {
          local.publish(conversation, event)
          for (const payload of envelopes(self, conversation, event)) outbox.unsafeOffer(payload)
        },
        listen: local.listen,
        subscribers: local.subscribers
      })
    })
  )
