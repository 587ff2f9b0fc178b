/**
 * Server-sent events on the wire: framing, headers, and the response of a
 * stream that a service pushes (the account event stream, reply streams).
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Chat, Events, Receiver } from "@hosting/core"
import { Effect, Stream } from "effect"

/** How long a client should wait before reconnecting, sent once per connection. */
export const retryMs = 3000

/** Headers of every event stream: no caching, no proxy buffering; never compressed. */
export const headers = {
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
  connection: "keep-alive"
} as const

/** One event in SSE framing. `data` is JSON on a single line. */
export const frame = (event: { readonly event: string; readonly data: unknown; readonly id?: string; readonly retry?: number }) =>
  (event.retry === undefined ? "" : `retry: ${event.retry}\n`) +
  (event.id === undefined ? "" : `id: ${event.id}\n`) +
  `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`

/** The SSE frame of an item of the account event stream. */
export const frameEvent = (item: Events.StreamItem): string => {
  switch (item._tag) {
    case "Ready":
      return frame({ event: "ready", data: { resync: item.resync }, retry: retryMs })
    case "Event":
      return frame({ event: item.event.type, id: item.event.id, data: item.event.data })
    case "Heartbeat":
      return frame({ event: "heartbeat", data: {} })
  }
}

/** The SSE frame of an item of a conversation's reply stream. */
export const frameReply = (item: Chat.ReplyItem): string => {
  switch (item._tag) {
    case "Delta":
      return frame({ event: "message.delta", id: item.id, data: { message_id: item.message_id, index: item.index, delta: item.delta } })
    case "Completed":
      return frame({ event: "message.completed", id: item.id, data: { message_id: item.message_id, content: item.content, trace_id: item.trace_id } })
    case "Failed":
      return frame({ event: "message.failed", id: item.id, data: { message_id: item.message_id, error: item.error } })
    case "Heartbeat":
      return frame({ event: "heartbeat", data: {} })
  }
}

/** The first frame of a reply stream: how long to wait before reconnecting. */
export const retryFrame = `retry: ${retryMs}\n\n`

/** The least and the most a client is told to wait before reconnecting to a stream the server ended. */
export const stopRetryMs = { min: 250, max: 1500 } as const

/**
 * The last frame of a stream the server ends (its process stops, or the
 * stream could not go on): reconnect soon, with `Last-Event-ID`, most likely
 * to another process behind the same address, and not all at once (the wait
 * is drawn between `stopRetryMs.min` and `.max`). A `retry` field alone
 * dispatches no event; the comment is for whoever reads the raw stream.
 */
export const stopFrame = () =>
  `: the server ended this stream; reconnect to resume it\nretry: ${
    stopRetryMs.min + Math.floor(Math.random() * (stopRetryMs.max - stopRetryMs.min + 1))
  }\n\n`

const utf8 = new TextEncoder()

/**
 * Frames of pushed batches, as bytes or as text (Node writes text into the
 * socket without a buffer of its own).
 */
export interface Encoder<A> {
  readonly encode: (items: ReadonlyArray<A>) => Uint8Array | string
}

/**
 * Frames encoded once: a service hands the same batch to every stream that
 * stands at the same place, so the bytes are kept by the batch's identity
 * for as long as the batch lives.
 */
export const framesOf = <A>(toFrame: (item: A) => string): Encoder<A> => {
  const encoded = new WeakMap<ReadonlyArray<A>, Uint8Array>()
  return {
    encode: (items) => {
      let bytes = encoded.get(items)
      if (bytes === undefined) {
        let text = ""
        for (const item of items) text += toFrame(item)
        bytes = utf8.encode(text)
        encoded.set(items, bytes)
      }
      return bytes
    }
  }
}

/** Encoder of the account event stream: its batches go to every stream of the account. */
export const eventFrames = framesOf(frameEvent)

/** Encoder of reply streams: each batch goes to the streams of one conversation, usually one, so it stays text. */
export const replyFrames: Encoder<Chat.ReplyItem> = {
  encode: (items) => {
    let text = ""
    for (const item of items) text += frameReply(item)
    return text
  }
}

type Follow<A, E, R> = (receiver: Receiver.Receiver<A>) => Effect.Effect<Receiver.Subscription, E, R>

/**
 * Where a pushed body is written: `write` says false once the connection's
 * buffer is full (the service then waits for `resume`), `end` ends it.
 */
export interface PushSink {
  readonly write: (chunk: Uint8Array | string) => boolean
  readonly end: () => void
}

/**
 * The key under which a stream body carries its push source, through the
 * global symbol registry: a server that knows it (`@hosting/http-node`)
 * hands the source its socket and keeps no fiber for the stream; any other
 * server runs the body as the stream it also is.
 */
export const pushSourceKey = Symbol.for("@hosting/http/PushSource")

/**
 * The streaming response of a service that pushes (see `Receiver`), for the
 * life of the registration `follow` makes (the request's scope). Frames pushed before a server attaches wait
 * in order. Attached by a server, each batch goes straight into its sink,
 * and a full sink pauses the service until it drains; run as a stream (any
 * other server), each batch is one element of it.
 */
export const pushed = <A, E, R>(
  frames: Encoder<A>,
  follow: Follow<A, E, R>,
  prefix = ""
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.suspend(() => {
    let subscription: Receiver.Subscription | undefined
    let sink: PushSink | undefined
    let pending: Array<Uint8Array | string> = prefix === "" ? [] : [prefix]
    let ended = false
    const receiver: Receiver.Receiver<A> = {
      push: (items) => {
        if (ended) return true
        const bytes = frames.encode(items)
        if (sink === undefined) {
          pending.push(bytes)
          return true
        }
        return sink.write(bytes)
      },
      end: () => {
        if (ended) return
        ended = true
        if (sink === undefined) pending.push(stopFrame())
        else {
          sink.write(stopFrame())
          sink.end()
        }
      }
    }
    const attach = (to: PushSink) => {
      sink = to
      const queued = pending
      pending = []
      for (const bytes of queued) to.write(bytes)
      if (ended) to.end()
      return { resume: () => subscription?.resume() }
    }
    // Built only when a server runs the body as a stream: http-node attaches instead.
    const stream = Stream.suspend(() =>
      Stream.async<Uint8Array>((emit) => {
        attach({
          write: (chunk) => {
            void emit.single(typeof chunk === "string" ? utf8.encode(chunk) : chunk)
            return true
          },
          end: () => void emit.end()
        })
      })
    )
    // A server that stops ends the stream as the service would: with the hint to reconnect.
    Object.defineProperty(stream, pushSourceKey, { value: { attach, stop: receiver.end } })
    return Effect.map(follow(receiver), (registered) => {
      subscription = registered
      return HttpServerResponse.stream(stream, { contentType: "text/event-stream", headers })
    })
  })
