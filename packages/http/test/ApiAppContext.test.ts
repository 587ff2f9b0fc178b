/**
 * The context a route runs in, on `@hosting/http-node`: the server makes it
 * before the request's fiber starts (the compiled app's `PrepareContext`);
 * where a middleware changed the context before the router, the router makes
 * it again from what the middleware left. Either way a handler sees its
 * path parameters and query through the platform's services, its group's
 * services, and what the middleware provided.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpClient, HttpRouter, HttpServerRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ApiApp } from "@hosting/http"
import { NodeServer } from "@hosting/http-node"
import { Context, Effect, Layer, Option, Schema } from "effect"

class GroupOnly extends Context.Tag("test/GroupOnly")<GroupOnly, string>() {}
class FromMiddleware extends Context.Tag("test/FromMiddleware")<FromMiddleware, string>() {}

const Seen = Schema.Struct({ name: Schema.String, q: Schema.String, group: Schema.String, middleware: Schema.String })

class Ctx extends HttpApiGroup.make("ctx").add(
  HttpApiEndpoint.get("seen", "/seen/:name").setPath(Schema.Struct({ name: Schema.String })).addSuccess(Seen)
) {}
class Api extends HttpApi.make("ctx").add(Ctx) {}

const CtxLive = ApiApp.group(Api, "ctx", (handlers) =>
  handlers.handle("seen", () =>
    Effect.gen(function*() {
      const params = yield* HttpRouter.params
      const query = yield* HttpServerRequest.ParsedSearchParams
      return {
        name: params["name"] ?? "-",
        q: String(query["q"] ?? "-"),
        group: yield* GroupOnly,
        middleware: Option.getOrElse(yield* Effect.serviceOption(FromMiddleware), () => "none")
      }
    }))).pipe(Layer.provide(Layer.succeed(GroupOnly, "the group's")))

/** Provides a service before the router when the request asks for it (so the router makes the route's context itself). */
const Providing = HttpApiBuilder.middleware((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    request.headers["x-provide"] === undefined ? app : Effect.provideService(app, FromMiddleware, "the middleware's")))

const served = ApiApp.serve().pipe(
  Layer.provide(Providing),
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(CtxLive))),
  Layer.provideMerge(NodeServer.layerTest)
)

const seen = (headers: Record<string, string>) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    Effect.flatMap(client.get("/seen/caf%C3%A9?q=1", { headers }), (response) => response.json))

describe("ApiApp: the context a route runs in", () => {
  it.effect("the compiled app carries the preparation of its routes' context for the server", () =>
    Effect.gen(function*() {
      class App extends Context.Tag("test/App")<App, unknown>() {}
      const app = yield* Effect.provide(
        App,
        Layer.effect(App, ApiApp.httpApp).pipe(
          Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(CtxLive))),
          Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, ApiApp.Groups.Live])
        )
      )
      expect(typeof (app as Record<symbol, unknown>)[ApiApp.prepareContextKey]).toBe("function")
      expect(ApiApp.prepareContextKey).toBe(NodeServer.prepareContextKey)
    }))

  it.effect("prepared before the fiber, or made by the router after a middleware changed the context: the same services", () =>
    Effect.gen(function*() {
      // With a tracer on, the server's span is provided before the router (a change of the context): off here, so
      // that the request without the header runs in the context the server prepared.
      const context = yield* Effect.withTracerEnabled(Layer.build(served), false)
      const prepared = yield* Effect.provide(seen({}), context)
      const remade = yield* Effect.provide(seen({ "x-provide": "1" }), context)
      expect(prepared).toEqual({ name: "café", q: "1", group: "the group's", middleware: "none" })
      expect(remade).toEqual({ name: "café", q: "1", group: "the group's", middleware: "the middleware's" })
    }).pipe(Effect.scoped))
})
