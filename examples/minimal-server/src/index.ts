/**
 * A custom server from the parts: SQLite in memory, the core use cases, the
 * whole hosting API, the probes (`/healthz`, `/readyz`), and one route of
 * its own (`GET /api/v1/status`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { HostingApi } from "@hosting/api"
import { Catalog, EventBus, Ports, ReplyBus, UseCases } from "@hosting/core"
import { ApiApp, Health, HostingHttp } from "@hosting/http"
import { NodeServer } from "@hosting/http-node"
import { SqliteStorage } from "@hosting/storage-sqlite"
import * as EchoAgent from "@hosting/testing/EchoAgent"
import * as FakeCluster from "@hosting/testing/FakeCluster"
import * as MemoryObjectStore from "@hosting/testing/MemoryObjectStore"
import { Effect, Layer, Option, Schema } from "effect"

/** The hosting API plus a status route. */
export class MinimalApi extends HostingApi.HostingApi.add(
  HttpApiGroup.make("status").add(
    HttpApiEndpoint.get("status", "/api/v1/status").addSuccess(Schema.Struct({ published_agents: Schema.Int }))
  )
) {}

const StatusLive = ApiApp.group(MinimalApi, "status", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog.Catalog
    return handlers.handle("status", () =>
      catalog.list({ q: Option.none(), limit: 1, offset: 0 }).pipe(
        Effect.map((page) => ({ published_agents: page.total })),
        Effect.orDie
      ))
  }))

/** Everything below HTTP: storage and objects in memory, a fake cluster, the echo agent and the use cases. */
export const Core = UseCases.layer.pipe(
  Layer.provideMerge(Ports.IdGeneratorTimeOrdered),
  Layer.provideMerge(EventBus.layerLocal),
  Layer.provideMerge(ReplyBus.layerLocal),
  Layer.provideMerge(EchoAgent.layer()),
  Layer.provideMerge(MemoryObjectStore.layer),
  Layer.provideMerge(FakeCluster.layer()),
  Layer.provideMerge(SqliteStorage.layer({ filename: ":memory:" }))
)

/** The API and the probes served by whatever HttpServer is in context. */
export const App = ApiApp.serve().pipe(
  Layer.provide(Health.layer()),
  Layer.provide(HostingHttp.extras()),
  Layer.provide(HttpApiBuilder.api(MinimalApi).pipe(Layer.provide([HostingHttp.handlers, StatusLive]))),
  Layer.provideMerge(Core)
)

/**
 * The server on a port of the loopback interface: `@hosting/http-node`, the
 * same request path as the example server's, answering 503 `starting`
 * until the app is attached instead of holding requests.
 */
export const layer = (port: number) =>
  App.pipe(Layer.provide(NodeServer.layer({ port, host: "127.0.0.1", unavailable: Health.refusal, livePath: Health.livePath })))
