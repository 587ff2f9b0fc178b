/**
 * Writes a platform `HttpServerResponse` into a Node response, and the one
 * kind of body this package adds: a pushed stream (server-sent events), fed
 * by its source straight into the socket, with no fiber while it is open.
 */
import * as Cookies from "@effect/platform/Cookies"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Chunk, Effect, Stream } from "effect"
import type { ServerResponse } from "node:http"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { endSoon } from "./internal/endBatch.js"

/**
 * Where a pushed body writes: `write` says false when the socket's buffer
 * is full (the source then waits for `resume`), `end` ends the answer.
 */
export interface PushSink {
  readonly write: (chunk: Uint8Array | string) => boolean
  readonly end: () => void
}

/**
 * A body that its producer pushes. A stream body that carries one under
 * `PushSource.key` is fed through `attach` on this server; any other server
 * runs the stream itself, so the handler answers the same on both.
 */
export interface PushSource {
  /** Starts delivery into the sink (what was pushed before comes first); `resume` is called once a full sink drained. */
  readonly attach: (sink: PushSink) => { readonly resume: () => void }
  /** Ends the body from the server's side (the server stops): the source writes its last words and ends the sink. */
  readonly stop?: () => void
}

export const PushSource = {
  /** The key, shared through the global symbol registry, so that a handler package need not import this one. */
  key: Symbol.for("@hosting/http/PushSource"),
  of: (body: HttpServerResponse.HttpServerResponse["body"]): PushSource | undefined =>
    body._tag === "Stream" ? (body.stream as unknown as Record<symbol, PushSource | undefined>)[PushSource.key] : undefined
}

/**
 * The pushed streams open on a server, for its stop to end them: a list
 * linked both ways, so that a stream that closes leaves it at once and
 * leaves nothing behind. (A long-lived `Set` that streams come and go from
 * would not: V8 keeps it in a table that moves to the old generation, and
 * every table it replaces there keeps the entries it had, so each stream
 * would be promoted with all it holds; docs/performance.md, "Registries
 * that promote what they hold".)
 */
export class OpenStreams {
  private first: OpenStream | undefined = undefined

  /** Adds an open stream; the function returned takes it off the list (once). */
  add(source: PushSource): () => void {
    const entry: OpenStream = { source, previous: undefined, next: this.first }
    if (this.first !== undefined) this.first.previous = entry
    this.first = entry
    return () => {
      if (entry.source === undefined) return
      if (entry.previous === undefined) this.first = entry.next
      else entry.previous.next = entry.next
      if (entry.next !== undefined) entry.next.previous = entry.previous
      entry.source = entry.previous = entry.next = undefined
    }
  }

  /** The streams open now. */
  sources(): Array<PushSource> {
    const all: Array<PushSource> = []
    for (let entry = this.first; entry !== undefined; entry = entry.next) all.push(entry.source!)
    return all
  }
}

interface OpenStream {
  source: PushSource | undefined
  previous: OpenStream | undefined
  next: OpenStream | undefined
}

/** The response's headers for Node, its cookies as `set-cookie` lines. */
export const headersOf = (response: HttpServerResponse.HttpServerResponse): Record<string, string | Array<string>> => {
  if (Cookies.isEmpty(response.cookies)) return response.headers
  const headers: Record<string, string | Array<string>> = { ...response.headers }
  const lines = Cookies.toSetCookieHeaders(response.cookies)
  const existing = headers["set-cookie"]
  if (existing !== undefined) lines.push(...(Array.isArray(existing) ? existing : [existing]))
  headers["set-cookie"] = lines
  return headers
}

/** How a written answer ends: at once, or when its body has been delivered (or the client left). */
export type Written = "done" | "streaming" | Effect.Effect<void>

/** Chunks of a body stream, written with the socket's backpressure. */
const writeStream = (out: ServerResponse, stream: Stream.Stream<Uint8Array, unknown>): Effect.Effect<void> =>
  Effect.suspend(() => {
    const drained = Effect.unsafeMakeLatch(true)
    const onDrain = () => drained.unsafeOpen()
    out.on("drain", onDrain)
    return stream.pipe(
      Stream.runForEachChunk((chunk) => {
        let full = false
        for (const bytes of Chunk.toReadonlyArray(chunk)) full = !out.write(bytes) || full
        if (!full) return Effect.void
        drained.unsafeClose()
        return drained.await
      }),
      Effect.matchCause({
        onSuccess: () => void out.end(),
        // A body that fails midway can only be cut: its status is long sent.
        onFailure: () => void out.destroy()
      }),
      Effect.ensuring(Effect.sync(() => out.off("drain", onDrain))),
      Effect.interruptible
    )
  })

/**
 * Writes the answer. A pushed body is handed its sink and goes on after
 * this returns ("streaming": the caller keeps the request's resources until
 * the connection closes; `open`, when given, holds its source meanwhile);
 * a stream or piped body is an effect to run. A body in hand (bytes, text
 * or none) is ended with the other answers of this turn of the event loop
 * (`internal/endBatch.ts`): it is "done" once it waits there.
 */
export const write = (
  out: ServerResponse,
  method: string,
  response: HttpServerResponse.HttpServerResponse,
  open?: OpenStreams
): Written => {
  if (out.writableEnded) return "done"
  const body = response.body
  if (body._tag === "FormData") {
    // The multipart boundary is the encoder's: its content type replaces the response's.
    const encoded = new Response(body.formData)
    out.writeHead(response.status, { ...headersOf(response), ...Object.fromEntries(encoded.headers) })
    if (method === "HEAD") {
      out.end()
      return "done"
    }
    return Effect.promise((signal) =>
      pipeline(Readable.fromWeb(encoded.body as import("node:stream/web").ReadableStream), out, { signal }).catch(() => out.destroy())
    ).pipe(Effect.interruptible)
  }
  out.writeHead(response.status, headersOf(response))
  if (method === "HEAD") {
    endSoon(out)
    return "done"
  }
  switch (body._tag) {
    case "Empty":
      endSoon(out)
      return "done"
    case "Uint8Array":
      endSoon(out, body.body)
      return "done"
    case "Raw": {
      const raw = body.body as { pipe?: unknown } | string | Uint8Array
      if (typeof raw === "object" && raw !== null && typeof (raw as { pipe?: unknown }).pipe === "function") {
        return Effect.promise((signal) => pipeline(raw as unknown as Readable, out, { signal }).catch(() => out.destroy())).pipe(
          Effect.interruptible
        )
      }
      endSoon(out, raw as Uint8Array | string)
      return "done"
    }
    case "Stream": {
      const source = PushSource.of(body)
      if (source === undefined) return writeStream(out, body.stream)
      const { resume } = source.attach({
        write: (chunk) => out.destroyed || out.write(chunk),
        end: () => void out.end()
      })
      out.on("drain", resume)
      const leave = open !== undefined && !out.writableEnded ? open.add(source) : undefined
      // Once closed, the response holds nothing of the stream: Node may keep a closed connection's objects
      // for a while, and the source holds the stream's state.
      out.once("close", () => {
        out.off("drain", resume)
        leave?.()
      })
      return "streaming"
    }
  }
}
