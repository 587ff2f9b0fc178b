/**
 * A failing adapter is answered with a bare 500.
 */
import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Errors, EventBus, Ports, ReplyBus, UseCases } from "@hosting/core"
import { HostingHttp } from "@hosting/http"
import { EchoAgent, FakeCluster, MemoryObjectStore, MemoryStorage } from "@hosting/testing"
import { Effect, Layer } from "effect"
import { expectErrorBody, raw } from "./HttpTestServer.js"


const leaky = new Error("SELECT secret_column FROM builds -- /var/lib/hosting/db.sqlite")
const brokenAgents = Layer.succeed(Ports.AgentStore, new Proxy({} as Ports.AgentStore["Type"], {
  get: (_, operation) => () => Effect.fail(new Errors.StorageError({ operation: String(operation), cause: leaky }))
}))

describe("HTTP: server failures", () => {
  it.layer(
    HttpApiBuilder.serve().pipe(
      Layer.provide(HostingHttp.layer()),
      Layer.provideMerge(UseCases.layer),
      Layer.provideMerge(Ports.IdGeneratorRandom),
      Layer.provideMerge(EventBus.layerLocal),
      Layer.provideMerge(FakeCluster.layer()),
      Layer.provideMerge(EchoAgent.layer()),
      Layer.provideMerge(ReplyBus.layerLocal),
      Layer.provideMerge(MemoryObjectStore.layer),
      Layer.provideMerge(Layer.merge(MemoryStorage.layer, brokenAgents)),
      Layer.provideMerge(NodeHttpServer.layerTest)
    )
  )((it) => {
    it.effect("a 500 answers internal_error and never shows the cause, SQL text or a file path", () =>
      Effect.gen(function*() {
        for (const path of ["/agents", "/agents?q=acme"]) {
          const r = yield* raw("GET", path)
          expect(r.status).toBe(500)
          expectErrorBody(r.body, "internal_error")
          const text = JSON.stringify(r.body)
          for (const secret of ["secret", "SELECT", "/var/lib", "sqlite", "StorageError", "at "]) {
            expect(text).not.toContain(secret)
          }
        }
      }))
  })
})
