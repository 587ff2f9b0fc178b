/**
 * The example server: picks adapters from the configuration and serves the
 * API. Composition only; every rule lives in the packages.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { A2aAgentRuntime } from "@hosting/agent-runtime-a2a"
import { HttpAgentRuntime } from "@hosting/agent-runtime-http"
import {
  AgentRuntime,
  Chat,
  DeviceAuth,
  EventBus,
  Events,
  Files,
  ObjectStore,
  Ports,
  PrincipalCache,
  ReplyBus,
  Rollouts,
  Traces,
  UseCases
} from "@hosting/core"
import * as Fixtures from "@hosting/testing/Fixtures"
import { ApiApp, Health, HostingHttp, MetricsRoute, StaticSite } from "@hosting/http"
import { NodeMetrics, NodeServer } from "@hosting/http-node"
import { FsObjectStore } from "@hosting/object-store-fs"
import * as EchoAgent from "@hosting/testing/EchoAgent"
import * as FakeCluster from "@hosting/testing/FakeCluster"
import * as MemoryObjectStore from "@hosting/testing/MemoryObjectStore"
import { Migrations } from "@hosting/storage-sql"
import { Data, Duration, Effect, Layer } from "effect"
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { ServerConfig } from "./ServerConfig.js"
import { offerSetup } from "./SetupOffer.js"

// Where a start without users writes its setup code, and the offer it prints: SetupOffer.ts.
export { setupCodeFileOf } from "./SetupOffer.js"

/**
 * Loads an adapter's module only when the configuration asks for it: the
 * Kubernetes, S3 and Postgres clients are large, and the embedded setup needs
 * none of them (they cost about a third of a second and 40 MB at start).
 */
const lazily = <M, A, E, R>(load: () => Promise<M>, build: (module: M) => Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Effect.promise(load), build))

/** A configuration this server cannot start with (a bad fixtures file, an unsupported database). */
export class StartupError extends Data.TaggedError("StartupError")<{ readonly message: string }> {}

/**
 * The SQLite storage, loaded only when the configuration names SQLite: a
 * server on Postgres never loads better-sqlite3 (an image may leave it out).
 */
const sqliteStorage = (filename: string) =>
  lazily(() => import("@hosting/storage-sqlite"), ({ SqliteStorage }) => SqliteStorage.layer({ filename })).pipe(
    Layer.mapError((error) => new StartupError({ message: `HOSTING_DATABASE_URL: cannot open the SQLite database: ${error.message}` }))
  )

/**
 * The storage ports and the two buses. On SQLite one process owns the
 * database and the buses are in process; on Postgres several processes may
 * share it, and the buses span them through LISTEN/NOTIFY.
 */
const storageAndBuses = (
  config: ServerConfig
): Layer.Layer<Ports.StoragePorts | EventBus.EventBus | ReplyBus.ReplyBus, StartupError> => {
  switch (config.database._tag) {
    case "Sqlite":
      return Layer.mergeAll(EventBus.layerLocal, ReplyBus.layerLocal).pipe(Layer.provideMerge(sqliteStorage(config.database.filename)))
    case "Postgres": {
      const url = config.database.url
      const host = new URL(url).host
      return lazily(() => import("@hosting/storage-postgres"), ({ PgBuses, PostgresStorage }) =>
        Layer.mergeAll(PgBuses.eventBus(), PgBuses.replyBus()).pipe(
          Layer.provideMerge(PostgresStorage.layer({ url, maxConnections: config.databasePoolSize }))
        )).pipe(
        Layer.mapError((error) => new StartupError({ message: `HOSTING_DATABASE_URL: cannot use the Postgres database at ${host}: ${error.message}` }))
      )
    }
  }
}

/** Reads and checks the fixtures file named by HOSTING_FIXTURES. */
const readFixtures = (path: string) =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (error) => new StartupError({ message: `HOSTING_FIXTURES: cannot read ${path}: ${(error as Error).message}` })
  }).pipe(
    Effect.flatMap(Fixtures.parse),
    Effect.mapError((error) =>
      error._tag === "StartupError" ? error : new StartupError({ message: `HOSTING_FIXTURES (${path}): ${error.message}` })
    )
  )

/** Loads the fixtures into storage at start. */
const loadFixtures = (path: string, fixtures: Fixtures.Fixtures) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const report = yield* Fixtures.load(fixtures).pipe(
      Effect.catchAll((error) =>
        error._tag === "StorageError"
          ? Effect.die(error)
          : Effect.fail(new StartupError({ message: `HOSTING_FIXTURES (${path}): ${error.message}` }))
      )
    )
    yield* Effect.logInfo(
      `fixtures loaded from ${path}: ${report.users} users, ${report.accounts} accounts, ${report.deployments} deployments, ` +
        `${report.files} files, ${report.traces} traces`
    )
  }))

/** The storage of HOSTING_DATABASE_URL alone (migrated when built), without buses or anything above it. */
const storageOnly = (config: ServerConfig) => {
  switch (config.database._tag) {
    case "Sqlite":
      return sqliteStorage(config.database.filename)
    case "Postgres": {
      const url = config.database.url
      const host = new URL(url).host
      return lazily(() => import("@hosting/storage-postgres"), ({ PostgresStorage }) => PostgresStorage.layer({ url, maxConnections: 2 })).pipe(
        Layer.mapError((error) => new StartupError({ message: `HOSTING_DATABASE_URL: cannot use the Postgres database at ${host}: ${error.message}` }))
      )
    }
  }
}

/**
 * `migrate`: brings the database of HOSTING_DATABASE_URL to this build's
 * schema and says where it stands, then ends; for an init container or a
 * Job before the servers start. Safe while other processes migrate (on
 * Postgres they wait for one another). Answers the line to print.
 */
export const migrate = (config: ServerConfig) =>
  Effect.scoped(Effect.gen(function*() {
    const storage = yield* Layer.build(storageOnly(config))
    const current = yield* Effect.provide(Migrations.current, storage).pipe(
      Effect.mapError((error) => new StartupError({ message: `HOSTING_DATABASE_URL: cannot read the schema's version: ${error.message}` }))
    )
    return current === undefined
      ? "migrate: the database has no schema (no migration ran)"
      : `migrate: the schema is at migration ${current.id} (${current.name}), the newest of the ${Migrations.known} this build knows`
  }))

/** The cluster adapter of HOSTING_CLUSTER; the fake one starts with the fixtures' `cluster` objects. */
const cluster = (config: ServerConfig, fixtures: Fixtures.Fixtures | undefined) => {
  switch (config.cluster) {
    case "fake":
      return FakeCluster.layer(fixtures?.cluster)
    case "kubernetes":
      return lazily(() => import("@hosting/cluster-kubernetes"), ({ KubernetesCluster }) => KubernetesCluster.layerFromKubeConfig())
  }
}

/** The object store of HOSTING_OBJECT_STORE. */
const objectStore = (
  config: ServerConfig
): Layer.Layer<ObjectStore.ObjectStore, ObjectStore.ObjectStoreError | StartupError> => {
  switch (config.objectStore._tag) {
    case "Fs":
      return FsObjectStore.layer({ directory: config.objectStore.directory })
    case "Memory":
      return MemoryObjectStore.layer
    case "S3": {
      const { accessKeyId, createBucket, endpoint, region, secretAccessKey } = config.s3
      const bucket = config.objectStore.bucket
      return lazily(() => import("@hosting/object-store-s3"), ({ S3ObjectStore }) =>
        S3ObjectStore.layer({
          bucket,
          region,
          createBucket,
          ...(endpoint === undefined ? {} : { endpoint }),
          // Without both keys the SDK's own chain applies (profiles, instance roles, web identity).
          ...(accessKeyId !== undefined && secretAccessKey !== undefined ? { credentials: { accessKeyId, secretAccessKey } } : {})
        }))
    }
  }
}

/** The runtime of HOSTING_AGENT_RUNTIME: the agents of the default protocol (the spec names none, or `openai`). */
const defaultAgentRuntime = (config: ServerConfig) => {
  switch (config.agentRuntime) {
    case "echo":
      return EchoAgent.layer({ delay: Duration.millis(config.echoDelayMs) })
    case "http":
      return HttpAgentRuntime.layer()
  }
}

/**
 * The agent runtime: each turn goes by the protocol its deployment's spec
 * names, `protocol: a2a` over A2A (the SDK loaded at the first such turn),
 * the others to the runtime of HOSTING_AGENT_RUNTIME.
 */
const agentRuntime = (config: ServerConfig) =>
  Layer.effect(
    AgentRuntime.AgentRuntime,
    Effect.map(AgentRuntime.AgentRuntime, (fallback) => AgentRuntime.byProtocol(fallback, { a2a: A2aAgentRuntime.make() }))
  ).pipe(Layer.provide(defaultAgentRuntime(config)))

/** Storage, cluster, use cases and fixtures: everything below HTTP. */
export const core = (config: ServerConfig, fixtures?: { readonly path: string; readonly data: Fixtures.Fixtures }) => {
  // One layer, built once: the setup code is offered, and traces first swept, once the fixtures are in.
  const loaded = fixtures ? loadFixtures(fixtures.path, fixtures.data) : Layer.empty
  return Layer.mergeAll(
    offerSetup(config).pipe(Layer.provide(loaded)),
    Events.retention,
    Files.expirySweep,
    Traces.retentionSweep.pipe(Layer.provide(loaded)),
    Rollouts.poller
  ).pipe(
    Layer.provideMerge(UseCases.layer),
    Layer.provideMerge(Layer.succeed(Files.FilesConfig, {
      ...Files.FilesConfig.defaultValue(),
      uploadExpiry: Duration.millis(config.uploadExpiryMs),
      uploadGrace: Duration.millis(config.uploadGraceMs),
      sweepInterval: Duration.millis(config.fileSweepMs)
    })),
    Layer.provideMerge(Layer.succeed(Events.EventsConfig, {
      replayCap: config.eventReplayCap,
      heartbeat: Duration.millis(config.heartbeatMs),
      retention: Duration.days(config.eventRetentionDays)
    })),
    Layer.provideMerge(Layer.succeed(Chat.ChatConfig, {
      messageLimit: config.messageLimit,
      maxAttachments: config.maxAttachments,
      flushInterval: Duration.millis(100),
      heartbeat: Duration.millis(config.heartbeatMs),
      leaseDuration: Duration.millis(config.replyLeaseMs),
      sharedStorage: config.database._tag === "Postgres"
    })),
    Layer.provideMerge(Layer.succeed(Traces.TracesConfig, { enabled: config.traces, retentionDays: config.traceRetentionDays })),
    Layer.provideMerge(Layer.succeed(Rollouts.RolloutsConfig, {
      ...Rollouts.RolloutsConfig.defaultValue(),
      interval: Duration.millis(config.rolloutPollMs)
    })),
    Layer.provideMerge(Layer.succeed(PrincipalCache.PrincipalCacheConfig, {
      ...PrincipalCache.PrincipalCacheConfig.defaultValue(),
      ttl: Duration.millis(config.authCacheMs)
    })),
    Layer.provideMerge(Layer.succeed(DeviceAuth.DeviceAuthConfig, {
      codeLifetime: Duration.minutes(10),
      interval: config.deviceInterval,
      tokenLifetime: Duration.days(30),
      sessionLifetime: Duration.hours(12)
    })),
    Layer.provideMerge(agentRuntime(config)),
    Layer.provideMerge(objectStore(config)),
    Layer.provideMerge(Ports.IdGeneratorTimeOrdered),
    Layer.provideMerge(cluster(config, fixtures?.data)),
    Layer.provideMerge(storageAndBuses(config))
  )
}

/** Where `pnpm build` writes the dashboard (examples/dashboard/dist), from src/ and dist/ alike. */
const builtDashboard = fileURLToPath(new URL("../../dashboard/dist", import.meta.url))

/**
 * The folder of the dashboard to serve at `/`: HOSTING_DASHBOARD, else the
 * workspace's build of examples/dashboard when there is one; none for `off`.
 */
const dashboardDirectory = (config: ServerConfig) =>
  Effect.gen(function*() {
    if (config.dashboard === "off") return undefined
    if (config.dashboard !== undefined) {
      if (existsSync(join(config.dashboard, "index.html"))) return config.dashboard
      return yield* new StartupError({ message: `HOSTING_DASHBOARD: ${config.dashboard} has no index.html (a built dashboard, or off)` })
    }
    if (existsSync(join(builtDashboard, "index.html"))) return builtDashboard
    yield* Effect.logWarning("the dashboard is not built (run pnpm build): only the API is served")
    return undefined
  })

/** The dashboard's files at `/`, when there is a dashboard to serve. */
const dashboard = (config: ServerConfig) =>
  Layer.unwrapEffect(Effect.map(dashboardDirectory(config), (directory) =>
    directory === undefined
      ? Layer.empty
      : StaticSite.layer({ directory }).pipe(Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)))))

/**
 * The API, the probes (`/healthz`, `/readyz`) and the dashboard served by the
 * HttpServer in context; gives the API's PublicAgentCache and RateLimiter,
 * and the probes' Readiness.
 */
export const app = (config: ServerConfig, fixtures?: Parameters<typeof core>[1], logging?: ServerLogging) => {
  const metrics = metricsOf(config)
  return ApiApp.serve().pipe(
    Layer.provide(dashboard(config)),
    Layer.provide(metrics.route),
    Layer.provideMerge(metrics.port),
    Layer.provideMerge(Health.layer()),
    Layer.provideMerge(HostingHttp.layer({
      maxBodyBytes: config.maxBodyBytes,
      publicUrl: config.publicUrl,
      maxStreamsPerUser: config.maxStreamsPerToken,
      rateLimit: { perUser: config.rateLimit, perIp: config.rateLimitIp, trustedProxies: config.trustProxy },
      oidc: config.oidc,
      accessLog: config.accessLog,
      writeAccessLine: logging?.writeAccessLine,
      observeRequest: metrics.observe
    })),
    Layer.provide(core(config, fixtures))
  )
}

const urlHost = (host: string) => (host.includes(":") ? `[${host}]` : host)

/** Prints the one line that says the server is ready, then tells `listening`. */
const announce = (config: ServerConfig, listening?: () => void) =>
  Layer.effectDiscard(HttpServer.addressWith((address) =>
    Effect.sync(() => {
      const port = address._tag === "TcpAddress" ? address.port : config.port
      console.log(`listening on http://${urlHost(config.host)}:${port}/api/v1`)
      listening?.()
    })
  ))

/**
 * The Node server on HOST:PORT (`@hosting/http-node`), with the timeouts
 * that keep slow clients from holding it: the headers and the whole request
 * (body included) must arrive within their timeouts; responses, event
 * streams and downloads are not limited by them. While the app is not
 * attached (it starts after the port is open, and stops before it closes),
 * `/healthz` answers 200 and everything else 503 `starting` or `stopping`.
 */
const listen = (config: ServerConfig) =>
  NodeServer.layer({
    port: config.port,
    host: config.host,
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    shutdownGraceMs: config.shutdownGraceMs,
    unavailable: Health.refusal,
    livePath: Health.livePath
  })

/** How the server's log is written, beyond its logger: a direct writer of access lines (NodeLogger.make's `access`). */
export interface ServerLogging {
  readonly writeAccessLine?: ((annotations: Readonly<Record<string, unknown>>) => void) | undefined
}

/** What the command gives the server beyond its configuration: its log's writer, and what to call once it listens. */
export interface ServerOptions extends ServerLogging {
  readonly listening?: (() => void) | undefined
}

/**
 * The metrics of HOSTING_METRICS: a registry told of every request, served
 * at `/metrics` on the server's port, or on HOSTING_METRICS_PORT alone.
 */
const metricsOf = (config: ServerConfig) => {
  if (!config.metrics) return { observe: undefined, route: Layer.empty, port: Layer.empty }
  const metrics = NodeMetrics.make()
  const port = config.metricsPort
  return {
    observe: metrics.observeRequest,
    route: port === undefined ? MetricsRoute.layer(metrics) : Layer.empty,
    port: port === undefined ? Layer.empty : Layer.scopedDiscard(NodeMetrics.listen(metrics, { port, host: config.host }))
  }
}

/** The whole server listening on HOST:PORT; announces itself once requests are served. */
export const layer = (config: ServerConfig, options?: ServerOptions) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const path = config.fixtures
    const fixtures = path === undefined ? undefined : { path, data: yield* readFixtures(path) }
    return Layer.mergeAll(announce(config, options?.listening), Health.stopFirst(Duration.millis(config.shutdownDelayMs))).pipe(
      Layer.provide(app(config, fixtures, options)),
      Layer.provide(listen(config))
    )
  }))
