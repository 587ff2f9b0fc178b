/**
 * A server-sent event stream read over the `HttpClient` of the context
 * (`FetchHttpClient` in browsers and Node, or a Node client), so that it
 * can send `Authorization: Bearer`, which a browser `EventSource` cannot.
 *
 * The stream reconnects by itself the way `EventSource` does: after the
 * connection ends or drops, it waits (the server's `retry:` value, else
 * `initialDelay`, doubled after each failed attempt, never more than
 * `maxDelay`) and reconnects with `Last-Event-ID` set to the last id it
 * delivered, so the server resumes after it. Error answers that a retry
 * cannot fix (4xx) end the stream with their typed error; 5xx, 408, 429 and
 * network failures are retried, up to `maxAttempts` failed attempts in a row.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Duration, Effect, Stream } from "effect"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { type ApiError, ConnectionLost, fromResponse, UnexpectedResponse } from "./ClientError.js"
import { authorize, type ClientOptions } from "./HostingClient.js"

/** One event as sent: its name (`message` when the server named none), its data text and its id. */
export interface SseMessage {
  readonly event: string
  readonly data: string
  readonly id: string | undefined
}

/** What a reconnection is about to do, for callers that show it. */
export interface Reconnecting {
  /** Failed attempts in a row so far (0 after a connection that was up and dropped). */
  readonly failures: number
  /** How long the stream waits before this attempt. */
  readonly delay: Duration.Duration
  /** The id the attempt resumes after, if any. */
  readonly lastEventId: string | undefined
  /** Why the previous connection ended (an error, or `undefined` when the server closed it). */
  readonly cause: unknown
}

/** How the stream reconnects. */
export interface ReconnectOptions {
  /** Wait before reconnecting while the server has sent no `retry:` (default 1 second). */
  readonly initialDelay?: Duration.DurationInput | undefined
  /** Longest wait between attempts; it also caps the server's `retry:` (default 30 seconds). */
  readonly maxDelay?: Duration.DurationInput | undefined
  /** Failed attempts in a row before the stream fails with `ConnectionLost` (default 10). */
  readonly maxAttempts?: number | undefined
  /** Longest silence of an open connection before it counts as dropped (default 60 seconds; servers send heartbeats every 25). */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** Called before each reconnection. */
  readonly onReconnect?: ((info: Reconnecting) => Effect.Effect<void>) | undefined
}

/** Where the stream is and where it starts. */
export interface SseOptions extends ReconnectOptions, Pick<ClientOptions, "token"> {
  /** The full URL of the stream. */
  readonly url: string
  /** Resume after this id (sent as `Last-Event-ID` on the first connection too). */
  readonly lastEventId?: string | undefined
}

/** Largest event read; a runaway server cannot exhaust memory. */
export const maxEventBytes = 4 * 1024 * 1024

/** Why one connection ended early: retried, unlike the failures that end the stream. */
class Dropped {
  constructor(readonly cause: unknown) {}
}

const retryable = (status: number) => status >= 500 || status === 408 || status === 429

const isEventStream = (response: HttpClientResponse.HttpClientResponse) =>
  (response.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() === "text/event-stream"

/**
 * The events of a stream, across reconnections, until the consumer stops
 * (the connection is closed then) or the stream fails.
 */
export const stream = (
  options: SseOptions
): Stream.Stream<SseMessage, ApiError | UnexpectedResponse | ConnectionLost, HttpClient.HttpClient> =>
  Stream.unwrap(Effect.gen(function*() {
    // Each request lives as long as the stream that reads its body: closing that stream aborts it.
    const http = HttpClient.withScope(yield* HttpClient.HttpClient)
    const initialDelay = Duration.decode(options.initialDelay ?? Duration.seconds(1))
    const maxDelay = Duration.decode(options.maxDelay ?? Duration.seconds(30))
    const idleTimeout = Duration.decode(options.idleTimeout ?? Duration.seconds(60))
    const maxAttempts = options.maxAttempts ?? 10
    const state = {
      lastEventId: options.lastEventId,
      serverRetry: undefined as Duration.Duration | undefined,
      failures: 0,
      rounds: 0,
      cause: undefined as unknown
    }

    const request = () => {
      let request = HttpClientRequest.get(options.url).pipe(
        HttpClientRequest.setHeader("accept", "text/event-stream"),
        HttpClientRequest.setHeader("cache-control", "no-cache"),
        authorize(options)
      )
      if (state.lastEventId !== undefined) request = HttpClientRequest.setHeader(request, "last-event-id", state.lastEventId)
      return request
    }

    /** The messages of one connection's body. */
    const messagesOf = (response: HttpClientResponse.HttpClientResponse) =>
      Stream.suspend(() => {
        const parsed: Array<SseMessage> = []
        let overflow = false
        const parser = createParser({
          onEvent: (event: EventSourceMessage) => {
            // As EventSource does: an `id:` field moves the last id, an empty one clears it.
            if (event.id !== undefined) state.lastEventId = event.id === "" ? undefined : event.id
            parsed.push({ event: event.event ?? "message", data: event.data, id: event.id === "" ? undefined : event.id })
          },
          onRetry: (ms) => {
            state.serverRetry = Duration.millis(ms)
          },
          onError: (error) => {
            if (error.type === "max-buffer-size-exceeded") overflow = true
          },
          maxBufferSize: maxEventBytes
        })
        return response.stream.pipe(
          Stream.timeoutFail(() => new Dropped(new Error(`no data for ${Duration.format(idleTimeout)}`)), idleTimeout),
          Stream.decodeText(),
          Stream.mapConcatEffect((text) => {
            parser.feed(text)
            if (overflow) return Effect.fail(new Dropped(new Error(`an event was larger than ${maxEventBytes} bytes`)))
            return Effect.succeed(parsed.splice(0))
          }),
          Stream.mapError((error) => (error instanceof Dropped ? error : new Dropped(error)))
        )
      })

    /** One connection: its messages, until it ends or drops. `attempt.ok` tells whether the server took it. */
    const connect = (attempt: { ok: boolean }) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const response = yield* http.execute(request()).pipe(Effect.mapError((error) => new Dropped(error)))
        if (response.status !== 200) {
          if (retryable(response.status)) return yield* Effect.fail(new Dropped(yield* Effect.flip(fromResponse(response))))
          return yield* fromResponse(response)
        }
        if (!isEventStream(response)) {
          return yield* new UnexpectedResponse({
            status: response.status,
            body: `not an event stream (content-type ${response.headers["content-type"] ?? "none"})`
          })
        }
        attempt.ok = true
        state.failures = 0
        state.cause = undefined
        return messagesOf(response)
      }))

    const pause = Effect.gen(function*() {
      if (state.failures >= maxAttempts) {
        return yield* new ConnectionLost({ attempts: state.failures, cause: state.cause })
      }
      const base = Duration.min(state.serverRetry ?? initialDelay, maxDelay)
      const delay = Duration.min(Duration.times(base, 2 ** Math.max(0, state.failures - 1)), maxDelay)
      if (options.onReconnect) {
        yield* options.onReconnect({ failures: state.failures, delay, lastEventId: state.lastEventId, cause: state.cause })
      }
      yield* Effect.sleep(delay)
    })

    // Each round waits (but the first), connects, and ends when the connection does; `forever` repeats it.
    const round = Stream.suspend(() => {
      const first = state.rounds === 0
      state.rounds += 1
      const attempt = { ok: false }
      return Stream.fromEffect(first ? Effect.void : pause).pipe(
        Stream.drain,
        Stream.concat(connect(attempt)),
        Stream.catchAll((error) => {
          if (!(error instanceof Dropped)) return Stream.fail(error)
          state.cause = error.cause
          return Stream.empty
        }),
        Stream.concat(Stream.fromEffect(Effect.sync(() => {
          if (!attempt.ok) state.failures += 1
        })).pipe(Stream.drain))
      )
    })

    return Stream.forever(round)
  }))
