/**
 * The server span of a request, as the platform's own servers make it (their
 * middleware for it is not public); `NodeServer` puts it around the app only
 * when the runtime that serves has its tracer enabled.
 */
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import { Context, Effect, Option } from "effect"

/**
 * The app with a server span around each request, as the platform's own
 * servers make it (its middleware is not public): named by the
 * `SpanNameGenerator`, the child of the trace the request's headers carry,
 * skipped where `currentTracerDisabledWhen` says. Request headers and the
 * query are not recorded (they may carry credentials: a stream's
 * `access_token`, a device code).
 */
export const withServerSpan = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    if (fiber.getFiberRef(HttpMiddleware.currentTracerDisabledWhen)(request)) return app
    const name = Context.get(fiber.currentContext, HttpMiddleware.SpanNameGenerator)(request)
    return Effect.useSpan(name, {
      parent: Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers)),
      kind: "server",
      captureStackTrace: false
    }, (span) => {
      const target = request.url
      const query = target.indexOf("?")
      span.attribute("http.request.method", request.method)
      span.attribute("url.path", query === -1 ? target : target.slice(0, query))
      const agent = request.headers["user-agent"]
      if (agent !== undefined) span.attribute("user_agent.original", agent)
      if (request.remoteAddress._tag === "Some") span.attribute("client.address", request.remoteAddress.value)
      return Effect.onExit(Effect.withParentSpan(app, span), (exit) =>
        Effect.sync(() => span.attribute("http.response.status_code", HttpServerError.exitResponse(exit).status)))
    })
  })

