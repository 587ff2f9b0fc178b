/**
 * Server-sent events on the wire: framing, headers, and the response for a
 * stream of the account event stream's items.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Chat, Events } from "@hosting/core"
import { Chunk, Effect, Stream } from "effect"

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
      return frame({ event: "message.completed", id: item.id, data: { message_id: item.message_id, content: item.content } })
    case "Failed":
      return frame({ event: "message.failed", id: item.id, data: { message_id: item.message_id, error: item.error } })
    case "Heartbeat":
      return frame({ event: "heartbeat", data: {} })
  }
}

/** The first frame of a reply stream: how long to wait before reconnecting. */
export const retryFrame = `retry: ${retryMs}\n\n`

const encoder = new TextEncoder()

/**
 * The streaming response: each batch of items becomes one encoded write. A
 * failure in the middle of a stream is logged and ends the stream; the
 * client reconnects with its last event id.
 */
export const response = <A, E>(items: Stream.Stream<A, E>, toFrame: (item: A) => string, prefix = "") =>
  HttpServerResponse.stream(
    items.pipe(
      Stream.mapChunks((chunk) => {
        if (Chunk.isEmpty(chunk)) return Chunk.empty<Uint8Array>()
        let text = ""
        for (const item of chunk) text += toFrame(item)
        return Chunk.of(encoder.encode(text))
      }),
      prefix === "" ? (s) => s : Stream.prepend(Chunk.of(encoder.encode(prefix))),
      Stream.catchAllCause((cause) => Stream.fromEffect(Effect.logError("event stream failed", cause)).pipe(Stream.drain))
    ),
    { contentType: "text/event-stream", headers }
  )
