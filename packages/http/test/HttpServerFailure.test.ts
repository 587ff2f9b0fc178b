/**
 * Failing adapters: a storage failure (database down, disk full, locked) is
 * answered 503 `storage_unavailable` with `Retry-After`, and the server
 * answers normally again once storage is back; a bug (a defect) is a bare
 * 500. Neither body shows the cause, SQL text or a file path.
 */
import { describe, expect, it } from "@effect/vitest"
import { Errors, EventBus, Ports, ReplyBus, UseCases } from "@hosting/core"
import { ApiApp, HostingHttp } from "@hosting/http"
import { NodeServer } from "@hosting/http-node"
import { EchoAgent, FakeCluster, MemoryObjectStore, MemoryStorage } from "@hosting/testing"
import { Context, Effect, Layer } from "effect"
import { expectErrorBody, raw } from "./HttpTestServer.js"

const leaky = new Error("SELECT secret_column FROM builds -- /var/lib/hosting/db.sqlite")

/** What the wrapped stores do: pass through, fail as storage does when it is down, or die as a bug does. */
let mode: "up" | "down" | "bug" = "up"

/** The store with every method going through `mode`. */
const switchable = <S extends object>(store: S): S =>
  new Proxy(store, {
    get: (target, operation) => {
      const method = Reflect.get(target, operation, target)
      if (typeof method !== "function") return method
      return (...args: ReadonlyArray<unknown>) =>
        mode === "down"
          ? Effect.fail(new Errors.StorageError({ operation: String(operation), cause: leaky }))
          : mode === "bug"
          ? Effect.die(leaky)
          : method.apply(target, args)
    }
  })

/** The agent and token stores of the memory storage, behind the switch. */
const flakyStores = Layer.effectContext(Effect.gen(function*() {
  const agents = yield* Ports.AgentStore
  const tokens = yield* Ports.TokenStore
  return Context.make(Ports.AgentStore, switchable(agents)).pipe(Context.add(Ports.TokenStore, switchable(tokens)))
}))

const secrets = ["secret", "SELECT", "/var/lib", "sqlite", "StorageError", "at ", "findPrincipal", "listPublished"]

const expectNothingLeaks = (body: unknown) => {
  const text = JSON.stringify(body)
  for (const secret of secrets) expect(text).not.toContain(secret)
}

describe("HTTP: server failures", () => {
  it.layer(
    ApiApp.serve().pipe(
      Layer.provide(HostingHttp.layer()),
      Layer.provideMerge(UseCases.layer),
      Layer.provideMerge(Ports.IdGeneratorTimeOrdered),
      Layer.provideMerge(EventBus.layerLocal),
      Layer.provideMerge(FakeCluster.layer()),
      Layer.provideMerge(EchoAgent.layer()),
      Layer.provideMerge(ReplyBus.layerLocal),
      Layer.provideMerge(MemoryObjectStore.layer),
      Layer.provideMerge(flakyStores),
      Layer.provideMerge(MemoryStorage.layer),
      Layer.provideMerge(NodeServer.layerTest)
    )
  )((it) => {
    it.effect("storage down: public and authenticated routes answer 503 storage_unavailable with Retry-After, then recover", () =>
      Effect.gen(function*() {
        mode = "down"
        try {
          for (const path of ["/agents", "/agents?q=acme"]) {
            const r = yield* raw("GET", path)
            expect(r.status).toBe(503)
            expectErrorBody(r.body, "storage_unavailable")
            expect(r.headers["retry-after"]).toMatch(/^\d+$/)
            expectNothingLeaks(r.body)
          }
          // Checking the token needs storage: a 503, never a 401 that would make a client drop its token.
          const me = yield* raw("GET", "/me", { token: "some-token" })
          expect(me.status).toBe(503)
          expectErrorBody(me.body, "storage_unavailable")
          expectNothingLeaks(me.body)
          // The details name the request id the answer carries, for the user's report to find the log line.
          const traced = yield* raw("GET", "/agents", { headers: { "x-request-id": "report-42" } })
          expect(traced.headers["x-request-id"]).toBe("report-42")
          expect(traced.body.details).toContain("Request id: report-42.")
        } finally {
          mode = "up"
        }
        const list = yield* raw("GET", "/agents")
        expect(list.status).toBe(200)
        expect(list.body).toMatchObject({ agents: [] })
        const me = yield* raw("GET", "/me", { token: "some-token" })
        expect(me.status).toBe(401)
        expectErrorBody(me.body, "unauthorized")
      }))

    it.effect("a bug in an adapter answers a bare 500 internal_error that never shows the cause, SQL text or a file path", () =>
      Effect.gen(function*() {
        mode = "bug"
        try {
          for (const path of ["/agents", "/agents?q=acme"]) {
            const r = yield* raw("GET", path)
            expect(r.status).toBe(500)
            expectErrorBody(r.body, "internal_error")
            expectNothingLeaks(r.body)
            expect(r.body.details).toContain(`Request id: ${r.headers["x-request-id"]}.`)
          }
        } finally {
          mode = "up"
        }
      }))
  })
})
