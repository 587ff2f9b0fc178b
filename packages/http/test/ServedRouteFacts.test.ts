/**
 * Route facts hold for the API that is served, not only for HostingApi: an
 * embedder's endpoints get their own body limits and rate charges from their
 * annotations, read from the served definition. Also the matcher that finds
 * a request's route, checked on every route of HostingApi.
 */
import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { HostingApi, RouteFacts } from "@hosting/api"
import { ApiApp, ApiRoutes, HostingHttp } from "@hosting/http"
import { NodeServer } from "@hosting/http-node"
import { TestServices } from "@hosting/testing"
import { Effect, Layer, Schema } from "effect"
import { expectErrorBody, raw } from "./HttpTestServer.js"

/** HostingApi plus a group of the embedder's: a small-bodied route, a free one and a costly one. */
class EmbedderApi extends HostingApi.HostingApi.add(
  HttpApiGroup.make("extra")
    .add(
      HttpApiEndpoint.post("note", "/api/v1/extra/note")
        .setPayload(Schema.Struct({ text: Schema.String }))
        .addSuccess(Schema.Struct({ length: Schema.Int }))
        .annotate(RouteFacts.BodyLimit, 32)
    )
    .add(HttpApiEndpoint.get("free", "/api/v1/extra/free").addSuccess(Schema.Struct({ ok: Schema.Boolean })).annotate(RouteFacts.RateCharge, 0))
    .add(HttpApiEndpoint.get("costly", "/api/v1/extra/costly").addSuccess(Schema.Struct({ ok: Schema.Boolean })).annotate(RouteFacts.RateCharge, 3))
) {}

const ExtraLive = HttpApiBuilder.group(EmbedderApi, "extra", (handlers) =>
  handlers
    .handle("note", ({ payload }) => Effect.succeed({ length: payload.text.length }))
    .handle("free", () => Effect.succeed({ ok: true }))
    .handle("costly", () => Effect.succeed({ ok: true })))

const served = ApiApp.serve().pipe(
  Layer.provide(HostingHttp.extras({ rateLimit: { perIp: { requests: 5, seconds: 600 } } })),
  Layer.provide(HttpApiBuilder.api(EmbedderApi).pipe(Layer.provide([HostingHttp.handlers, ExtraLive]))),
  Layer.provideMerge(TestServices.make()),
  Layer.provideMerge(NodeServer.layerTest)
)

describe("route facts of the served API", () => {
  it.layer(served)((it) => {
    it.effect("an embedder's endpoint has its own body limit: over it 413 before reading, under it answered", () =>
      Effect.gen(function*() {
        const small = yield* raw("POST", "/extra/note", { json: { text: "hello" } })
        expect([small.status, small.body]).toEqual([200, { length: 5 }])
        const large = yield* raw("POST", "/extra/note", { json: { text: "x".repeat(64) } })
        expect(large.status).toBe(413)
        expectErrorBody(large.body, "payload_too_large")
        expect(large.body.details).toContain("32 bytes")
      }))

    it.effect("rate charges: a route charged 0 never counts, one charged 3 takes three requests' worth of the bucket", () =>
      Effect.gen(function*() {
        // The address's bucket holds 5; the two requests above took 2 of it.
        for (let i = 0; i < 10; i++) expect((yield* raw("GET", "/extra/free")).status).toBe(200)
        const costly = yield* raw("GET", "/extra/costly")
        expect(costly.status).toBe(200)
        expect(costly.headers["ratelimit-remaining"]).toBe("0")
        const refused = yield* raw("GET", "/extra/costly")
        expect(refused.status).toBe(429)
        expectErrorBody(refused.body, "rate_limited")
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
        expect((yield* raw("GET", "/extra/free")).status).toBe(200)
      }))
  })
})

describe("ApiRoutes.matcher", () => {
  const filled = (path: string) => path.split("/").map((part) => (part.startsWith(":") ? "x1" : part)).join("/")

  it("finds every route of HostingApi by its own path (parameters filled in, a trailing slash allowed), most specific first", () => {
    const matcher = ApiRoutes.matcher(ApiRoutes.routes)
    for (const route of ApiRoutes.routes) {
      const found = matcher.match(route.method, filled(route.path))
      // A parameter filled with text may be taken by a static route of the same shape only when that route is more specific.
      expect(found, route.id).toBeDefined()
      expect(ApiRoutes.bySpecificity(found!, route), `${route.id} matched ${found!.id}`).toBeLessThanOrEqual(0)
      expect(matcher.match(route.method, `${filled(route.path)}/`)?.id, route.id).toBe(found!.id)
    }
  })

  it("takes no route for another method, an empty segment or a longer path", () => {
    const matcher = ApiRoutes.matcher(ApiRoutes.routes)
    const send = ApiRoutes.routes.find((r) => r.id === "chat.send")!
    const path = filled(send.path)
    expect(matcher.match("POST", path)?.id).toBe("chat.send")
    expect(matcher.match("DELETE", path)).toBeUndefined()
    expect(matcher.match("POST", path.replace("/x1/", "//"))).toBeUndefined()
    expect(matcher.match("POST", `${path}/more`)).toBeUndefined()
  })

  it("reads an API's routes once: the same list for the same API", () => {
    expect(ApiRoutes.routesOf(EmbedderApi)).toBe(ApiRoutes.routesOf(EmbedderApi))
    expect(ApiRoutes.routesOf(EmbedderApi).length).toBe(ApiRoutes.routes.length + 3)
  })
})
