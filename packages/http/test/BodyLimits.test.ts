/**
 * Body limits per route (BodyLimits): every route that takes a body decides
 * its limit on its endpoint in @hosting/api (RouteFacts), small routes refuse what only the document routes need with
 * 413 `{ error, details }` and store nothing, declared or streamed.
 */
import { describe, expect, it, layer as withLayer } from "@effect/vitest"
import type { HttpApi, HttpApiGroup } from "@effect/platform"
import { OpenApi } from "@effect/platform"
import { HostingApi, RouteFacts } from "@hosting/api"
import { ApiRoutes, BodyLimits } from "@hosting/http"
import { Context, Effect, Option } from "effect"
import {
  bearer,
  errorBodyProblems,
  formBody,
  jsonBody,
  layer,
  registered,
  registration,
  send,
  world,
  writesOf
} from "./RouteHarness.js"

const serverLimit = 2 * 1024 * 1024

describe("HTTP: body limits per route", () => {
  it("every route but a GET decides its body limit on its endpoint; a streamed route declares no payload", () => {
    expect(ApiRoutes.routes.length).toBeGreaterThan(30)
    const undecided = ApiRoutes.routes.filter((r) => r.method !== "GET" && BodyLimits.declared(r) === undefined)
    expect(undecided.map((r) => `${r.id} (${r.method} ${r.path})`)).toEqual([])
    const gets = ApiRoutes.routes.filter((r) => r.method === "GET" && BodyLimits.declared(r) !== undefined)
    expect(gets.map((r) => r.id)).toEqual([])
    for (const route of ApiRoutes.routes) {
      const limit = BodyLimits.declared(route)
      if (typeof limit === "number") expect(Number.isSafeInteger(limit) && limit > 0, route.id).toBe(true)
      expect(limit === "streamed" && Option.isSome(route.endpoint.payloadSchema), route.id).toBe(false)
    }
    expect(ApiRoutes.routes.filter((r) => BodyLimits.declared(r) === "streamed").map((r) => r.id)).toEqual(["files.upload"])
  })

  it("a route's limit never exceeds the server's; document routes take the server's; uploads are streamed", () => {
    expect(BodyLimits.limitFor("POST", "/api/v1/agents/acme/helper/publish", serverLimit)).toBe(16 * 1024)
    expect(BodyLimits.limitFor("POST", "/api/v1/agents/acme/helper/publish/", serverLimit)).toBe(16 * 1024)
    expect(BodyLimits.limitFor("POST", "/api/v1/agents/acme/helper/publish", 4096)).toBe(4096)
    expect(BodyLimits.limitFor("POST", "/api/v1/agents/acme/helper/register", serverLimit)).toBe(serverLimit)
    expect(BodyLimits.limitFor("POST", "/api/v1/session", serverLimit)).toBe(8 * 1024)
    expect(BodyLimits.limitFor("POST", "/api/v1/device", serverLimit)).toBe(8 * 1024)
    expect(BodyLimits.limitFor("POST", "/api/v1/deployments/d-1/messaging/conversations/c-1/messages", serverLimit)).toBe(1024 * 1024)
    expect(BodyLimits.limitFor("PUT", "/api/v1/deployments/d-1/files/k/content", serverLimit)).toBe("streamed")
    // The same path with another method is another route.
    expect(BodyLimits.limitFor("GET", "/api/v1/deployments/d-1/files/k/content", serverLimit)).toBe(serverLimit)
    // A route an embedder adds keeps the server's limit.
    expect(BodyLimits.limitFor("POST", "/api/v1/custom/thing", serverLimit)).toBe(serverLimit)
  })

  it("the OpenAPI document is the same with and without the route facts", () => {
    const withoutFacts = <A extends { readonly annotations: Context.Context<never> }>(item: A): A =>
      Object.assign(Object.create(Object.getPrototypeOf(item)), item, {
        annotations: Context.omit(RouteFacts.BodyLimit)(item.annotations)
      })
    const api = HostingApi.HostingApi as unknown as HttpApi.HttpApi.Any & {
      readonly groups: Record<string, HttpApiGroup.HttpApiGroup.AnyWithProps>
    }
    const stripped = Object.assign(Object.create(Object.getPrototypeOf(api)), api, {
      groups: Object.fromEntries(Object.entries(api.groups).map(([key, group]) => [
        key,
        Object.assign(withoutFacts(group), {
          endpoints: Object.fromEntries(Object.entries(group.endpoints).map(([name, e]) => [name, withoutFacts(e)]))
        })
      ]))
    }) as typeof api
    const facts = (groups: typeof api.groups) =>
      Object.values(groups).flatMap((g) => Object.values(g.endpoints))
        .filter((e) => Context.getOption(e.annotations, RouteFacts.BodyLimit)._tag === "Some").length
    // The copy really lacks them, and the definition has them.
    expect(facts(stripped.groups)).toBe(0)
    expect(facts(api.groups)).toBeGreaterThan(0)
    expect(OpenApi.fromApi(stripped as any)).toEqual(OpenApi.fromApi(api as any))
  })

  withLayer(layer(), { excludeTestServices: true })((it) => {
    it.effect("publish with a 20 KB body is 413 payload_too_large and publishes nothing", () =>
      Effect.gen(function*() {
        const w = yield* world
        yield* registered(w)
        const answer = yield* send({
          method: "POST",
          path: `/api/v1/agents/${w.team.account}/helper/publish`,
          headers: { ...bearer(w.team.tokens.owner), ...jsonBody({}).headers },
          body: JSON.stringify({ build_id: "b-1", version: "1.0.0", padding: "x".repeat(20_000) })
        })
        expect(answer.status).toBe(413)
        expect(errorBodyProblems(answer)).toEqual([])
        expect(answer.json).toMatchObject({ error: "payload_too_large" })
        expect(yield* writesOf(answer.request)).toEqual([])
        const agent = yield* send({ method: "GET", path: `/api/v1/agents/${w.team.account}/helper`, headers: bearer(w.team.tokens.owner) })
        expect((agent.json as { versions: Array<{ version?: string }> }).versions.every((v) => v.version === undefined)).toBe(true)
      }))

    it.effect("a sign-in with a 12 KB body is 413 and starts no session", () =>
      Effect.gen(function*() {
        const w = yield* world
        const answer = yield* send({
          method: "POST",
          path: "/api/v1/session",
          ...jsonBody({ token: w.team.tokens.owner, filler: "y".repeat(12_000) })
        })
        expect(answer.status).toBe(413)
        expect(errorBodyProblems(answer)).toEqual([])
        expect(answer.headers["set-cookie"]).toBeUndefined()
        expect(yield* writesOf(answer.request)).toEqual([])
      }))

    it.effect("an OAuth form post of 12 KB is 413 and creates no device code", () =>
      Effect.gen(function*() {
        const answer = yield* send({
          method: "POST",
          path: "/api/v1/oauth/device/code",
          ...formBody({ client_id: "cli", filler: "y".repeat(12_000) })
        })
        expect(answer.status).toBe(413)
        expect(errorBodyProblems(answer)).toEqual([])
        expect(yield* writesOf(answer.request)).toEqual([])
      }))

    it.effect("renaming an account with a 20 KB body is 413 and the account keeps its name", () =>
      Effect.gen(function*() {
        const w = yield* world
        const answer = yield* send({
          method: "PUT",
          path: `/api/v1/accounts/${w.team.account}`,
          headers: { ...bearer(w.team.tokens.owner), ...jsonBody({}).headers },
          body: JSON.stringify({ name: `${w.team.account}-renamed`, padding: "z".repeat(20_000) })
        })
        expect(answer.status).toBe(413)
        expect(yield* writesOf(answer.request)).toEqual([])
        const account = yield* send({ method: "GET", path: `/api/v1/accounts/${w.team.account}`, headers: bearer(w.team.tokens.owner) })
        expect(account.status).toBe(200)
      }))

    it.effect("register still takes a 600 KB readme (the server-wide limit applies to it)", () =>
      Effect.gen(function*() {
        const w = yield* world
        const answer = yield* send({
          method: "POST",
          path: `/api/v1/agents/${w.team.account}/helper/register`,
          headers: { ...bearer(w.team.tokens.owner), ...jsonBody({}).headers },
          body: JSON.stringify({ ...registration("b-big"), readme: "r".repeat(600_000) })
        })
        expect(answer.status).toBe(201)
      }))
  })
})
