/**
 * Server-sent events on the wire: framing, headers, and the response for a
 * stream of the account event stream's items.
 */
import { HttpServerResponse } from "@effect/platform"
import type { Events } from "@hosting/core"
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
export const frameItem = (item: Events.StreamItem): string => {
  switch (item._tag) {
    case "Ready":
      return frame({ event: "ready", data: { resync: item.resync }, retry: retryMs })
    case "Event":
      return frame({ event: item.event.type, id: item.event.id, data: item.event.data })
    case "Heartbeat":
      return frame({ event: "heartbeat", data: {} })
  }
}

/**
 * The streaming response. A failure in the middle of a stream is logged and
 * ends the stream; the client reconnects with its last event id.
 */
export const response = <E>(items: Stream.Stream<Events.StreamItem, E>) =>
  HttpServerResponse.stream(
    items.pipe(
      Stream.map(frameItem),
      Stream.catchAllCause((cause) => Stream.fromEffect(Effect.logError("event stream failed", cause)).pipe(Stream.drain)),
      Stream.encodeText
    ),
    { contentType: "text/event-stream", headers }
  )
