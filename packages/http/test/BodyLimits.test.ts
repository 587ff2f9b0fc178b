/**
 * Body limits per route (BodyLimits): the table covers every route that
 * takes a body, small routes refuse what only the document routes need with
 * 413 `{ error, details }` and store nothing, declared or streamed.
 */
import { describe, expect, it, layer as withLayer } from "@effect/vitest"
import { HostingApi } from "@hosting/api"
import { BodyLimits } from "@hosting/http"
import { Effect } from "effect"
import {
  bearer,
  endpoints,
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

const routeKey = (method: string, path: string) => `${method} ${path.slice(HostingApi.basePath.length)}`

describe("HTTP: body limits per route", () => {
  it("every route with a body is in the table (uploads aside), and every entry names a route", () => {
    const withBody = endpoints.filter((e) =>
      e.path.startsWith(HostingApi.basePath) && (e.method === "POST" || e.method === "PUT" || e.method === "PATCH") &&
      e.id !== "files.upload"
    )
    const keys = new Set(Object.keys(BodyLimits.routes))
    expect(withBody.map((e) => routeKey(e.method, e.path)).filter((key) => !keys.has(key))).toEqual([])
    const routes = new Set(endpoints.map((e) => routeKey(e.method, e.path)))
    expect([...keys].filter((key) => !routes.has(key))).toEqual([])
  })

  it("a route's limit never exceeds the server's; document routes take the server's", () => {
    expect(BodyLimits.limitFor("POST", "/api/v1/agents/acme/helper/publish", serverLimit)).toBe(16 * 1024)
    expect(BodyLimits.limitFor("POST", "/api/v1/agents/acme/helper/publish", 4096)).toBe(4096)
    expect(BodyLimits.limitFor("POST", "/api/v1/agents/acme/helper/register", serverLimit)).toBe(serverLimit)
    expect(BodyLimits.limitFor("POST", "/api/v1/session", serverLimit)).toBe(8 * 1024)
    // A route an embedder adds keeps the server's limit.
    expect(BodyLimits.limitFor("POST", "/api/v1/custom/thing", serverLimit)).toBe(serverLimit)
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
