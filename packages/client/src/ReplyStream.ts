/**
 * The reply stream of a conversation
 * (`GET /deployments/{deploymentId}/messaging/conversations/{conversationId}/stream`,
 * see docs/chat.md) as typed events, reconnecting and resuming by itself.
 *
 * `events` is the whole stream, open across turns. `reply` is one reply: the
 * deltas of one assistant message, ending after its `Completed` or `Failed`;
 * it places each delta by its `index`, so a delta repeated across a
 * reconnection is never delivered twice.
 */
import type { HttpClient } from "@effect/platform"
import { Data, Effect, Option, Schema, Stream } from "effect"
import { type ApiError, type ConnectionLost, ProtocolError, type UnexpectedResponse } from "./ClientError.js"
import { type ClientOptions, normalizeBaseUrl } from "./HostingClient.js"
import * as ServerSentEvents from "./ServerSentEvents.js"

/** An event of a reply stream. */
export type ReplyEvent = Data.TaggedEnum<{
  /** A piece of the reply's text; `index` is where it starts in the whole text. */
  Delta: { readonly id: string; readonly message_id: string; readonly index: number; readonly delta: string }
  /** The reply ended; `content` is the whole stored text. */
  Completed: { readonly id: string; readonly message_id: string; readonly content: string; readonly trace_id: string | null }
  /** The reply ended without completing (`error: "cancelled"` when cancelled); what arrived is kept. */
  Failed: { readonly id: string; readonly message_id: string; readonly error: string }
  Heartbeat: {}
}>

/** Constructors and matchers of `ReplyEvent`. */
export const ReplyEvent = Data.taggedEnum<ReplyEvent>()

/** The events of one reply. */
export type ReplyPart = Exclude<ReplyEvent, { readonly _tag: "Heartbeat" }>

const DeltaData = Schema.Struct({ message_id: Schema.String, index: Schema.NonNegativeInt, delta: Schema.String })
const CompletedData = Schema.Struct({
  message_id: Schema.String,
  content: Schema.String,
  /** The trace of the reply's turn; null while the server records no traces (absent from older servers). */
  trace_id: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})
const FailedData = Schema.Struct({ message_id: Schema.String, error: Schema.String })

const json = <A, I>(schema: Schema.Schema<A, I>, message: ServerSentEvents.SseMessage) =>
  Schema.decodeUnknown(Schema.parseJson(schema))(message.data).pipe(
    Effect.mapError((cause) => new ProtocolError({ details: `the data of a ${message.event} event could not be read`, cause }))
  )

/** The typed event of one message of the stream; `undefined` for kinds this client does not know. */
export const decode = (message: ServerSentEvents.SseMessage): Effect.Effect<ReplyEvent | undefined, ProtocolError> => {
  const id = message.id ?? ""
  switch (message.event) {
    case "message.delta":
      return Effect.map(json(DeltaData, message), (data) => ReplyEvent.Delta({ id, ...data }))
    case "message.completed":
      return Effect.map(json(CompletedData, message), (data) => ReplyEvent.Completed({ id, ...data }))
    case "message.failed":
      return Effect.map(json(FailedData, message), (data) => ReplyEvent.Failed({ id, ...data }))
    case "heartbeat":
      return Effect.succeed(ReplyEvent.Heartbeat())
    default:
      return Effect.succeed(undefined)
  }
}

/** Which conversation, and where to resume. */
export interface StreamOptions extends ClientOptions, ServerSentEvents.ReconnectOptions {
  readonly deploymentId: string
  readonly conversationId: string
  /** Resume after this event id. */
  readonly lastEventId?: string | undefined
}

/** The URL of a conversation's reply stream. */
export const url = (options: Pick<StreamOptions, "baseUrl" | "deploymentId" | "conversationId">) =>
  `${normalizeBaseUrl(options.baseUrl)}/deployments/${encodeURIComponent(options.deploymentId)}/messaging/conversations/${
    encodeURIComponent(options.conversationId)
  }/stream`

type Failure = ApiError | UnexpectedResponse | ConnectionLost | ProtocolError

/**
 * Every event of the conversation's reply stream, across turns and
 * reconnections, until the consumer stops. Opened while a reply streams, it
 * starts with what arrived so far as one delta; opened after, with the
 * latest reply and its end.
 */
export const events = (options: StreamOptions): Stream.Stream<ReplyEvent, Failure, HttpClient.HttpClient> =>
  Stream.suspend(() =>
    ServerSentEvents.stream({ ...options, url: url(options) }).pipe(
      Stream.mapEffect(decode),
      Stream.filter((event): event is ReplyEvent => event !== undefined)
    )
  )

/** Which reply to follow. */
export interface ReplyOptions extends StreamOptions {
  /** The assistant message to follow; by default the first one the stream shows (the latest reply when it opens). */
  readonly messageId?: string | undefined
}

/**
 * One reply: its deltas, each placed once by `index` (overlaps from a resumed
 * connection are trimmed, repeats dropped), then its `Completed` or `Failed`,
 * after which the stream ends and the connection closes.
 */
export const reply = (options: ReplyOptions): Stream.Stream<ReplyPart, Failure, HttpClient.HttpClient> =>
  Stream.suspend(() => {
    let awaited = options.messageId
    // How much of the reply's text has been delivered.
    let received = 0
    return events(options).pipe(
      Stream.filter((event): event is ReplyPart => event._tag !== "Heartbeat"),
      Stream.filter((event) => {
        awaited ??= event.message_id
        return event.message_id === awaited
      }),
      Stream.filterMap((event): Option.Option<ReplyPart> => {
        if (event._tag !== "Delta") return Option.some(event)
        const end = event.index + event.delta.length
        if (end <= received) return Option.none()
        const start = Math.max(event.index, received)
        received = end
        return Option.some(
          start === event.index ? event : ReplyEvent.Delta({ ...event, index: start, delta: event.delta.slice(start - event.index) })
        )
      }),
      Stream.takeUntil((event) => event._tag !== "Delta")
    )
  })
