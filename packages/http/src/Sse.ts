/**
 * Server-sent events on the wire: framing, headers, and the response of a
 * stream that a service pushes (the account event stream, reply streams).
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Chat, Events, Receiver } from "@hosting/core"
import { Effect, Exit, Scope } from "effect"
import type { ServerResponse } from "node:http"
import { Readable } from "node:stream"

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

/** The Node response of a request, when the server is Node's and nothing was written yet. */
const nodeResponseOf = (request: HttpServerRequest.HttpServerRequest): ServerResponse | undefined => {
  const response = NodeHttpServerRequest.toServerResponse(request) as ServerResponse | undefined
  return typeof response?.writeHead === "function" && !response.headersSent ? response : undefined
}

type Follow<A, E, R> = (receiver: Receiver.Receiver<A>) => Effect.Effect<Receiver.Subscription, E, R>

/**
 * On Node, the stream is handed off: the handler registers the receiver and
 * answers at once with the stream's status and headers; the server writes
 * them (with whatever its middleware adds) and the request's fiber ends,
 * while the receiver goes on writing frames straight into the Node
 * response. The request's scope (which holds the registration and the
 * stream's slot) is closed when the connection closes. An open stream so
 * costs its socket, its listener and a few closures.
 */
const handedOff = <A, E, R>(
  response: ServerResponse,
  frames: Encoder<A>,
  follow: Follow<A, E, R>,
  prefix: string
) =>
  Effect.gen(function*() {
    // The request's scope, which the server made (a closeable one) and closes unless it is ejected.
    const scope = (yield* Effect.scope) as Scope.CloseableScope
    // Frames pushed before the head is written wait here.
    let pending: Array<Uint8Array | string> | undefined = prefix === "" ? [] : [prefix]
    let ended = false
    const receiver: Receiver.Receiver<A> = {
      push: (items) => {
        if (ended || response.destroyed) return true
        const bytes = frames.encode(items)
        if (pending !== undefined) {
          pending.push(bytes)
          return true
        }
        return response.write(bytes)
      },
      end: () => {
        if (ended) return
        ended = true
        if (pending === undefined && !response.destroyed) response.end()
      }
    }
    const subscription = yield* follow(receiver)
    // The server's own listener, which would interrupt the request's fiber: that fiber will have ended.
    let earlier = response.listeners("close")
    HttpApp.ejectDefaultScopeClose(scope)
    const close = () => Effect.runFork(Scope.close(scope, Exit.void))
    if (response.destroyed) close()
    else response.once("close", close)
    response.on("drain", subscription.resume)
    const { end, writeHead } = response
    response.writeHead = function(this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>) {
      response.writeHead = writeHead
      writeHead.apply(response, args)
      if (response.statusCode !== 200) {
        // Something after the handler answered otherwise: that answer goes out as it is, and the stream is over.
        ended = true
        pending = undefined
        close()
        return response
      }
      // The server's end of the head-only answer is the stream's start instead.
      response.end = function(this: ServerResponse) {
        response.end = end
        const queued = pending ?? []
        pending = undefined
        for (const bytes of queued) response.write(bytes)
        if (ended) response.end()
        for (const listener of earlier) response.removeListener("close", listener as () => void)
        earlier = []
        return response
      } as ServerResponse["end"]
      return response
    } as ServerResponse["writeHead"]
    return HttpServerResponse.empty({ status: 200, headers: { ...headers, "content-type": "text/event-stream" } })
  })

/**
 * A response fed through a readable: the receiver writes each batch into a
 * Node readable that the server pipes into the response; when the client
 * reads slower than events come, the receiver asks for a pause once the
 * readable's buffer is full, and resumes when the client has read it.
 */
const piped = <A, E, R>(frames: Encoder<A>, follow: Follow<A, E, R>, prefix: string) =>
  Effect.suspend(() => {
    let subscription: Receiver.Subscription | undefined
    let ended = false
    const body = new Readable({ read: () => subscription?.resume() })
    if (prefix !== "") body.push(utf8.encode(prefix))
    const receiver: Receiver.Receiver<A> = {
      // Once ended or gone, pushes are dropped: the request's scope is about to close.
      push: (items) => ended || body.destroyed ? true : body.push(frames.encode(items)),
      end: () => {
        if (ended || body.destroyed) return
        ended = true
        body.push(null)
      }
    }
    return follow(receiver).pipe(
      Effect.map((registered) => {
        subscription = registered
        return HttpServerResponse.raw(body, { contentType: "text/event-stream", headers })
      }),
      Effect.onError(() => Effect.sync(() => body.destroy()))
    )
  })

/**
 * The streaming response of a service that pushes (see `Receiver`), for the
 * life of the request's scope: handed off to the Node response when there
 * is one, else piped through a readable. A slow client's stream pauses when
 * its buffer is full and gets what it missed once it has read it.
 */
export const pushed = <A, E, R>(
  frames: Encoder<A>,
  follow: Follow<A, E, R>,
  prefix = ""
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest | Scope.Scope> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const response = request.method === "HEAD" ? undefined : nodeResponseOf(request)
    return response === undefined ? piped(frames, follow, prefix) : handedOff(response, frames, follow, prefix)
  })
