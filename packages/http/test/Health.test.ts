/**
 * The probes outside the API: `/healthz` answers while the process runs;
 * `/readyz` answers 200 only while storage answers and the server is not
 * stopping; no rate limit refuses a probe. (The answers while no app is
 * attached are the server's: packages/http-node/test/NodeServer.test.ts.)
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Errors, Ports } from "@hosting/core"
import { ApiApp, Health, HostingHttp } from "@hosting/http"
import { NodeServer } from "@hosting/http-node"
import { TestServices } from "@hosting/testing"
import { Effect, Layer } from "effect"
import { expectErrorBody, raw } from "./HttpTestServer.js"

/** What the storage behind readiness does: answer, fail as a database that is down does, or never answer. */
let storage: "up" | "down" | "silent" = "up"

const switchableTransactor = Layer.effect(
  Ports.Transactor,
  Effect.map(Ports.Transactor, (transactor) =>
    Ports.Transactor.of({
      withTransaction: (effect) =>
        storage === "down"
          ? Effect.fail(new Errors.StorageError({ operation: "transaction", cause: new Error("connection refused") }))
          : storage === "silent"
          ? Effect.never
          : transactor.withTransaction(effect)
    }))
)

const probe = (path: string) => raw("GET", path, { root: true })

describe("HTTP: health probes", () => {
  // The real clock: readiness times storage out.
  withLayer(
    ApiApp.serve().pipe(
      Layer.provideMerge(Health.layer({ timeout: "300 millis" }).pipe(Layer.provide(switchableTransactor))),
      Layer.provideMerge(HostingHttp.layer({ rateLimit: { perIp: { requests: 2, seconds: 600 } } })),
      Layer.provideMerge(TestServices.make()),
      Layer.provideMerge(NodeServer.layerTest)
    ),
    { excludeTestServices: true }
  )((it) => {
    it.effect("/healthz answers 200 and /readyz 200 while storage answers; neither is cached", () =>
      Effect.gen(function*() {
        const live = yield* probe("/healthz")
        expect([live.status, live.body, live.headers["cache-control"]]).toEqual([200, { status: "alive" }, "no-store"])
        const ready = yield* probe("/readyz")
        expect([ready.status, ready.body, ready.headers["cache-control"]]).toEqual([200, { status: "ready" }, "no-store"])
      }))

    it.effect("/readyz answers 503 storage_unavailable while storage fails or does not answer within the timeout; /healthz stays 200", () =>
      Effect.gen(function*() {
        for (const mode of ["down", "silent"] as const) {
          storage = mode
          const started = Date.now()
          const ready = yield* probe("/readyz").pipe(Effect.ensuring(Effect.sync(() => (storage = "up"))))
          expect(Date.now() - started).toBeLessThan(2000)
          expect(ready.status).toBe(503)
          expectErrorBody(ready.body, "storage_unavailable")
          expect(ready.headers["retry-after"]).toBe("5")
          expect(JSON.stringify(ready.body)).not.toContain("connection refused")
          expect((yield* probe("/healthz")).status).toBe(200)
        }
        expect((yield* probe("/readyz")).status).toBe(200)
      }))

    it.effect("no rate limit refuses a probe: the address's limit holds for the API only", () =>
      Effect.gen(function*() {
        for (let i = 0; i < 6; i++) {
          expect((yield* probe(i % 2 === 0 ? "/readyz" : "/healthz?from=kubelet")).status).toBe(200)
        }
        const statuses: Array<number> = []
        for (let i = 0; i < 3; i++) statuses.push((yield* raw("GET", "/agents")).status)
        expect(statuses).toContain(429)
      }))

    it.effect("once the server stops, /readyz answers 503 `stopping` with Retry-After", () =>
      Effect.gen(function*() {
        const readiness = yield* Health.Readiness
        readiness.stop()
        const ready = yield* probe("/readyz")
        expect(ready.status).toBe(503)
        expectErrorBody(ready.body, "stopping")
        expect(ready.headers["retry-after"]).toBe(String(Health.retryAfterSeconds))
        expect((yield* probe("/healthz")).status).toBe(200)
      }))
  })
})
