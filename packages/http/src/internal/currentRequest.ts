/**
 * The request in context, read in one step of the fiber. `Effect.flatMap`
 * of the request's tag takes three (the tag, the read, the continuation),
 * and the middleware in front of every route reads the request several
 * times: see docs/performance.md.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect } from "effect"

/** `f` of the request in context, as `Effect.flatMap(HttpServerRequest, f)` is, in one step. */
export const withRequest = <A, E, R>(
  f: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiberRuntime<A, E, R>((fiber) => f(Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)))
