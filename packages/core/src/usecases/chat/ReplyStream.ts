/**
 * The reply stream of a conversation: a snapshot of its latest reply (or
 * what follows the event a client resumes after), then every event of the
 * bus as it is published, with the gaps a bus across processes can leave
 * filled from storage, and a heartbeat each interval.
 */
import { Effect, Option, Runtime, Scope } from "effect"
import type { ConversationId, Message, MessageId } from "../../model/Conversation.js"
import type { StorageError } from "../../model/Errors.js"
import * as Heartbeats from "../../internal/heartbeats.js"
import { ConversationStore } from "../../ports/Ports.js"
import * as ReplyBus from "../../ports/ReplyBus.js"
import * as Metrics from "../../runtime/Metrics.js"
import { InFlightSet } from "../../runtime/InFlight.js"
import type { Receiver, Subscription } from "../../runtime/Receiver.js"
import { ChatConfig, failure } from "./ChatConfig.js"

/** What the reply stream carries. Ids resume a stream: `<message_id>:<offset>` or `<message_id>:end`. */
export type ReplyItem =
  | { readonly _tag: "Delta"; readonly id: string; readonly message_id: MessageId; readonly index: number; readonly delta: string }
  | {
    readonly _tag: "Completed"
    readonly id: string
    readonly message_id: MessageId
    readonly content: string
    /** The trace of the reply's turn (null while traces are off). */
    readonly trace_id: string | null
  }
  | { readonly _tag: "Failed"; readonly id: string; readonly message_id: MessageId; readonly error: string }
  | { readonly _tag: "Heartbeat" }

/** The subscription of a reply stream: it is never paused, so there is nothing to resume. */
const unpaused: Subscription = { resume: () => {} }

const resumeId = /^(.+):(\d{1,12}|end)$/

/** How far a stream has sent each reply it told of. */
type Sent = Map<string, { offset: number; ended: boolean }>

/** A delta item of the stream: `text` at `index`, the reply's content reaching `end`. */
const deltaItem = (messageId: MessageId, end: number, index: number, text: string): ReadonlyArray<ReplyItem> => [
  { _tag: "Delta", id: `${messageId}:${end}`, message_id: messageId, index, delta: text }
]

/** The first items of a stream: the latest reply from where the client resumes, and how far they go. */
const snapshot = (latest: Option.Option<Message>, lastEventId: Option.Option<string>, sent: Sent): Array<ReplyItem> => {
  const head: Array<ReplyItem> = []
  if (Option.isNone(latest)) return head
  const message = latest.value
  const resume = Option.flatMap(lastEventId, (raw) => Option.fromNullable(resumeId.exec(raw)))
  const from = Option.match(resume, {
    onNone: () => 0,
    onSome: (m) => (m[1] === message.message_id ? (m[2] === "end" ? "end" as const : Number(m[2])) : 0)
  })
  if (from !== "end") {
    if (message.content.length > from) head.push(...deltaItem(message.message_id, message.content.length, from, message.content.slice(from)))
    if (message.status === "complete") {
      head.push({
        _tag: "Completed",
        id: `${message.message_id}:end`,
        message_id: message.message_id,
        content: message.content,
        trace_id: message.trace_id
      })
    } else if (message.status !== "streaming") {
      head.push({
        _tag: "Failed",
        id: `${message.message_id}:end`,
        message_id: message.message_id,
        error: message.status === "cancelled" ? failure.cancelled : failure.shutdown
      })
    }
  }
  sent.set(message.message_id, {
    offset: Math.max(message.content.length, from === "end" ? 0 : from),
    ended: from === "end" || message.status !== "streaming"
  })
  return head
}

/** The items of an event; undefined for a delta that starts past what the stream sent (a gap to read from storage). */
const translate = (event: ReplyBus.ReplyEvent, sent: Sent): ReadonlyArray<ReplyItem> | undefined => {
  if (event._tag === "CancelRequested") return []
  const state = sent.get(event.message_id) ?? { offset: 0, ended: false }
  sent.set(event.message_id, state)
  if (state.ended) return []
  switch (event._tag) {
    case "Delta": {
      const end = event.offset + event.delta.length
      if (end <= state.offset) return []
      if (event.offset > state.offset) return undefined
      const start = state.offset
      state.offset = end
      return deltaItem(event.message_id, end, start, event.delta.slice(start - event.offset))
    }
    case "Completed":
      state.ended = true
      return [{
        _tag: "Completed",
        id: `${event.message_id}:end`,
        message_id: event.message_id,
        content: event.content,
        trace_id: event.trace_id ?? null
      }]
    case "Failed":
      state.ended = true
      return [{ _tag: "Failed", id: `${event.message_id}:end`, message_id: event.message_id, error: event.error }]
  }
}

/**
 * Builds the opener of reply streams for the life of the scope; `current`
 * gives a message's newest state (a reply running here is ahead of
 * storage). When the scope closes, every open stream's receiver is ended.
 */
export const make = (current: (message: Message, conversation: ConversationId) => Message) =>
  Effect.gen(function*() {
    const conversations = yield* ConversationStore
    const bus = yield* ReplyBus.ReplyBus
    const config = yield* ChatConfig
    const scope = yield* Effect.scope

    /** The heartbeat of reply streams: one array for all, and one timer. */
    const heartbeat: ReadonlyArray<ReplyItem> = [{ _tag: "Heartbeat" }]
    const heartbeats = Heartbeats.make(config.heartbeat, scope)
    /** The receivers of open reply streams, ended when the service stops (runtime/InFlight.ts: they come and go). */
    const receivers = new InFlightSet<Receiver<ReplyItem>>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const receiver of receivers) receiver.end()
      })
    )

    /**
     * The stored content of a reply from `from` to `to`, waiting (a few
     * flush intervals at most) for storage to catch up. Needed when another
     * process receives the reply: the snapshot read from storage may lag
     * the first chunk this stream hears of.
     */
    const missing = Effect.fnUntraced(function*(id: ConversationId, messageId: MessageId, from: number, to: number) {
      for (let attempt = 0; attempt < 10; attempt++) {
        const latest = Option.filter(yield* conversations.latestReply(id), (m) => m.message_id === messageId)
        // Not the latest: a reply that queued turns wait behind (the snapshot showed the newest of those).
        const stored = Option.isSome(latest)
          ? latest
          : Option.fromNullable((yield* conversations.messages(id)).find((m) => m.message_id === messageId))
        if (Option.isSome(stored) && stored.value.content.length >= to) {
          return Option.some(stored.value.content.slice(from, to))
        }
        yield* Effect.sleep(config.flushInterval)
      }
      return Option.none<string>()
    })

    /** The items of an event, the text of a gap read from storage first. */
    const translateFilling = (id: ConversationId, event: ReplyBus.ReplyEvent, sent: Sent): Effect.Effect<ReadonlyArray<ReplyItem>, StorageError> =>
      Effect.suspend(() => {
        const now = translate(event, sent)
        if (now !== undefined || event._tag !== "Delta") return Effect.succeed(now ?? [])
        const state = sent.get(event.message_id)!
        return Effect.flatMap(missing(id, event.message_id, state.offset, event.offset), (gap) => {
          const from = state.offset
          const end = event.offset + event.delta.length
          state.offset = end
          return Option.isSome(gap)
            ? Effect.succeed(deltaItem(event.message_id, end, from, gap.value + event.delta))
            : Effect.as(
              Effect.logWarning(`chat: reply ${event.message_id} skipped from ${from} to ${event.offset} on a stream`),
              deltaItem(event.message_id, end, event.offset, event.delta)
            )
        })
      })

    /**
     * Follows a conversation (the caller was checked to own it) until the
     * scope closes: the latest reply as the snapshot, from after
     * `lastEventId` when it names one, then each event as it is published.
     */
    const open = Effect.fnUntraced(
      function*(id: ConversationId, lastEventId: Option.Option<string>, receiver: Receiver<ReplyItem>) {
        const streamScope: Scope.Scope = yield* Effect.scope
        /**
         * The bus's events in order, each as it is published; while the
         * snapshot is read and sent, or a gap is filled from storage, they
         * wait in `waiting` (undefined once the stream is live).
         */
        let waiting: Array<ReplyBus.ReplyEvent> | undefined = []
        let deliver: (event: ReplyBus.ReplyEvent) => void = () => {}
        // Listen before the snapshot, so that nothing falls between them.
        yield* bus.listen(id, (event) => {
          if (waiting !== undefined) waiting.push(event)
          else deliver(event)
        })
        const sent: Sent = new Map()
        const head = snapshot(Option.map(yield* conversations.latestReply(id), (m) => current(m, id)), lastEventId, sent)
        if (head.length > 0) receiver.push(head)
        // Delivers the waiting events, in order, then lets the stream go live; a storage failure ends the stream (the client resumes).
        // Made when a gap needs it: most streams never fill one.
        const fill = (): Effect.Effect<void> => Effect.gen(function*() {
          while (waiting !== undefined && waiting.length > 0) {
            const items = yield* translateFilling(id, waiting.shift()!, sent)
            if (items.length > 0) receiver.push(items)
          }
          waiting = undefined
        }).pipe(
          Effect.catchAll((error) => Effect.zipRight(Effect.logError("chat: a reply stream failed", error), Effect.sync(() => receiver.end())))
        )
        // A fill runs in a fiber of the stream's scope (interrupted when it closes), made only when a gap needs one.
        const runtime = yield* Effect.runtime<never>()
        const run = (effect: Effect.Effect<void>) => void Runtime.runFork(runtime)(Effect.forkIn(effect, streamScope))
        deliver = (event) => {
          const items = translate(event, sent)
          if (items === undefined) {
            waiting = [event]
            run(fill())
          } else if (items.length > 0) {
            receiver.push(items)
            if (event._tag === "Delta" && event.at !== undefined) Metrics.observe(Metrics.replyChunkLag, Metrics.secondsSince(event.at))
          }
        }
        if (waiting.length > 0) run(fill())
        else waiting = undefined
        const beating = Heartbeats.beating(() => receiver.push(heartbeat))
        receivers.add(receiver)
        Metrics.add(Metrics.replyStreamsOpen, 1)
        yield* heartbeats.add(beating)
        // Added to the scope directly: Effect.addFinalizer would patch the fiber's context in and out when it runs.
        // `addFinalizerExit` keeps it a plain `Effect.sync` (`addFinalizer` wraps it in a step more).
        yield* Scope.addFinalizerExit(streamScope, () =>
          Effect.sync(() => {
            heartbeats.remove(beating)
            if (receivers.delete(receiver)) Metrics.add(Metrics.replyStreamsOpen, -1)
          }))
        return unpaused
      }
    )

    return { open } as const
  })
