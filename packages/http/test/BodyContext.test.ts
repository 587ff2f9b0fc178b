/**
 * A request with a body on `@hosting/http-node`: the body's limit and the
 * careful JSON reading (ErrorResponses) are set in the context the server
 * prepared for the request, so its route runs in that context (no copy of
 * it, no route context made again by the router); where a middleware in
 * front changed the context, they are provided as before. Either way the
 * limits and the JSON depth check hold.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpClient, HttpClientRequest, HttpServerRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ApiApp, ErrorResponses } from "@hosting/http"
import { NodeServer } from "@hosting/http-node"
import { Context, Effect, Layer, Schema } from "effect"
import { ownServices } from "../src/internal/ownServices.js"

const Echoed = Schema.Struct({ text: Schema.String, prepared: Schema.Boolean })

class Body extends HttpApiGroup.make("body").add(
  HttpApiEndpoint.post("echo", "/echo").setPayload(Schema.Struct({ text: Schema.String })).addSuccess(Echoed)
) {}
class Api extends HttpApi.make("body").add(Body) {}

const BodyLive = ApiApp.group(Api, "body", (handlers) =>
  handlers.handle("echo", ({ payload }) =>
    Effect.withFiberRuntime((fiber) => {
      const request = fiber.currentContext.unsafeMap.get(HttpServerRequest.HttpServerRequest.key) as HttpServerRequest.HttpServerRequest
      return Effect.succeed({ text: payload.text, prepared: ownServices(request, fiber.currentContext) !== undefined })
    })))

class Elsewhere extends Context.Tag("test/Elsewhere")<Elsewhere, string>() {}

/** Provides a service in front of everything when the request asks for it: the context is no longer the prepared one. */
const Providing = HttpApiBuilder.middleware((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    request.headers["x-provide"] === undefined ? app : Effect.provideService(app, Elsewhere, "provided")))

const served = ApiApp.serve().pipe(
  Layer.provide(ErrorResponses.layer({ maxBodyBytes: 200 })),
  Layer.provide(Providing),
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(BodyLive))),
  Layer.provideMerge(NodeServer.layerTest)
)

const post = (body: string, headers: Record<string, string> = {}) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    Effect.flatMap(
      client.execute(HttpClientRequest.post("/echo").pipe(HttpClientRequest.bodyText(body, "application/json"), HttpClientRequest.setHeaders(headers))),
      (response) => Effect.map(response.json, (json) => ({ status: response.status, json: json as Record<string, unknown> }))
    ))

const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`

describe("a request with a body keeps the context prepared for it", () => {
  it.effect("its route runs in the prepared context; with a middleware that changed the context, in the router's; the same answers and refusals", () =>
    Effect.gen(function*() {
      // With a tracer on, the server's span changes the context before the router: off here, as the example server runs.
      const context = yield* Effect.withTracerEnabled(Layer.build(served), false)
      for (const [headers, prepared] of [[{}, true], [{ "x-provide": "1" }, false]] as const) {
        const ok = yield* Effect.provide(post(JSON.stringify({ text: "hello" }), headers), context)
        expect(ok).toEqual({ status: 200, json: { text: "hello", prepared } })
        const large = yield* Effect.provide(post(JSON.stringify({ text: "x".repeat(300) }), headers), context)
        expect([large.status, large.json["error"]]).toEqual([413, "payload_too_large"])
        const nested = yield* Effect.provide(post(deep(ErrorResponses.maxJsonDepth + 1), headers), context)
        expect([nested.status, nested.json["error"]]).toEqual([400, "invalid_json"])
        const invalid = yield* Effect.provide(post(JSON.stringify({ text: 1 }), headers), context)
        expect(invalid.status).toBe(400)
      }
    }).pipe(Effect.scoped))
})
