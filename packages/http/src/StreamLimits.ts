/**
 * At most N server-sent streams (account events, reply streams and MCP tool
 * calls, which follow a reply, together) open at once per user, whatever tokens and sessions they use (an anonymous
 * caller: per client address), so that one person cannot hold every
 * connection of the server by minting sessions. A stream's slot is taken
 * when the handler answers and given back when its request ends: the client
 * went away, the stream ended, or the server stopped.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Principal } from "@hosting/core"
import { Context, Effect, Layer, Option, Scope } from "effect"
import { json } from "./ErrorResponses.js"

/** Options of the stream limit. */
export interface StreamLimitsOptions {
  /** Most streams one user may hold open; 0 for no limit. */
  readonly maxPerUser: number
}

/** Seconds a refused client is told to wait (`Retry-After`): about the time a browser tab takes to let a stream go. */
export const retryAfterSeconds = 5

export interface Service {
  /** The limit; 0 for none. */
  readonly max: number
  /**
   * Takes a slot for `key` until the scope closes; false (nothing taken)
   * when the key already holds the most.
   */
  readonly acquire: (key: string) => Effect.Effect<boolean, never, Scope.Scope>
  /** Streams open for a key. */
  readonly openFor: (key: string) => number
  /** Keys holding at least one stream: the table never keeps more. */
  readonly keys: () => number
}

/** The open streams of one server. */
export class StreamLimits extends Context.Tag("@hosting/http/StreamLimits")<StreamLimits, Service>() {}

/** The count of open streams per key; a key leaves the table with its last stream. */
export const make = (options: StreamLimitsOptions): Service => {
  const open = new Map<string, number>()
  const max = Math.max(0, Math.floor(options.maxPerUser))
  const release = (key: string) =>
    Effect.sync(() => {
      const count = (open.get(key) ?? 0) - 1
      if (count <= 0) open.delete(key)
      else open.set(key, count)
    })
  const acquire = (key: string) =>
    Effect.uninterruptible(Effect.suspend(() => {
      const count = open.get(key) ?? 0
      if (max > 0 && count >= max) return Effect.succeed(false)
      open.set(key, count + 1)
      // Added to the scope directly: the finalizer keeps nothing of the request's fiber.
      return Effect.flatMap(Effect.scope, (scope) => Effect.as(Scope.addFinalizer(scope, release(key)), true))
    }))
  return { max, acquire, openFor: (key) => open.get(key) ?? 0, keys: () => open.size }
}

/** The stream limit with the given options. */
export const layer = (options: StreamLimitsOptions) => Layer.sync(StreamLimits, () => make(options))

/** The key of the current request: its user, else (no one signed in) the connection's address. */
export const keyOf = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<string> =>
  Effect.map(Effect.serviceOption(Principal.CurrentPrincipal), (principal) =>
    Option.match(principal, {
      onSome: ({ user }) => `user:${user.id}`,
      onNone: () => `address:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
    }))

/** The 429 of a user who holds the most streams. */
export const refused = (max: number): HttpServerResponse.HttpServerResponse =>
  json(
    429,
    "too_many_streams",
    `You already hold ${max} open streams (event and reply streams and MCP calls, all your tokens and sessions together), the most allowed; close one and retry.`,
    { "retry-after": String(retryAfterSeconds) }
  )

/**
 * Runs `open` (which builds a stream's response) when the caller may hold
 * one more stream, for as long as the request lasts;
 * else answers 429 `too_many_streams` with `Retry-After`. The slot is taken
 * before `open` runs, so that concurrent opens cannot overshoot, and given
 * back if `open` fails.
 */
export const guard = <A, E, R>(open: Effect.Effect<A, E, R>): Guarded<A, E, R> =>
  // Without a generator, which would be a new generator function for every stream (docs/decisions.md, "Generator functions made once").
  Effect.flatMap(StreamLimits, (limits): Guarded<A, E, R> =>
    limits.max === 0
      ? open
      : Effect.flatMap(
        Effect.flatMap(HttpServerRequest.HttpServerRequest, keyOf),
        (key) => Effect.flatMap(limits.acquire(key), (acquired): Guarded<A, E, R> => acquired ? open : Effect.succeed(refused(limits.max)))
      ))

/** A guarded stream's effect: its own, or the 429 of a caller who holds the most streams. */
type Guarded<A, E, R> = Effect.Effect<
  A | HttpServerResponse.HttpServerResponse,
  E,
  R | StreamLimits | HttpServerRequest.HttpServerRequest | Scope.Scope
>
