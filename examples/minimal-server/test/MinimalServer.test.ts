/**
 * The minimal server composes the parts: the whole API works, and so do
 * the route it adds and the probes.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeServer } from "@hosting/http-node"
import { describe, expect, it } from "@effect/vitest"
import { App } from "@hosting/example-minimal-server"
import { Seed } from "@hosting/testing"
import { Effect, Layer } from "effect"

const json = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.flatMap(HttpClient.HttpClient, (http) => http.execute(request)).pipe(
    Effect.flatMap((response) => Effect.map(response.json, (body) => ({ status: response.status, body: body as any }))),
    Effect.scoped
  )

describe("minimal server", () => {
  it.layer(App.pipe(Layer.provideMerge(NodeServer.layerTest)))((it) => {
    it.effect("its own route and the hosting routes are served together", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const before = yield* json(HttpClientRequest.get("/api/v1/status"))
        expect(before).toEqual({ status: 200, body: { published_agents: 0 } })
        const base = `/api/v1/agents/${team.account}/helper`
        const registered = yield* json(HttpClientRequest.post(`${base}/register`).pipe(
          HttpClientRequest.bearerToken(team.tokens.owner),
          HttpClientRequest.bodyUnsafeJson({ build_id: "b-1", registry: "ghcr.io/x", spec_content: "name: helper\n" })
        ))
        expect(registered.status).toBe(201)
        const published = yield* json(HttpClientRequest.post(`${base}/publish`).pipe(
          HttpClientRequest.bearerToken(team.tokens.owner),
          HttpClientRequest.bodyUnsafeJson({ build_id: "b-1", version: "0.0.1" })
        ))
        expect(published.status).toBe(201)
        const after = yield* json(HttpClientRequest.get("/api/v1/status"))
        expect(after.body).toEqual({ published_agents: 1 })
        const missing = yield* json(HttpClientRequest.get("/api/v1/nothing-here"))
        expect(missing).toMatchObject({ status: 404, body: { error: "not_found" } })
      }))

    it.effect("serves the probes outside the API: /healthz alive, /readyz ready", () =>
      Effect.gen(function*() {
        expect(yield* json(HttpClientRequest.get("/healthz"))).toEqual({ status: 200, body: { status: "alive" } })
        expect(yield* json(HttpClientRequest.get("/readyz"))).toEqual({ status: 200, body: { status: "ready" } })
      }))
  })
})
