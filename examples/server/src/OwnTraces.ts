/**
 * The server's own traces (docs/operations.md, "Traces of the server
 * itself"). With an OTLP endpoint in the standard `OTEL_*` variables, the
 * tracer is on and its spans go to `@effect/opentelemetry`'s tracer, batched
 * and sent by the official OTLP/HTTP exporter (which reads its endpoint,
 * headers and timeout from those variables itself); the batch still waiting
 * is sent when the server stops. Without one, the tracer is off: no span is
 * made, not even the platform's per request, since each costs time for
 * nothing.
 */
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { HostingApi } from "@hosting/api"
import { ApiRoutes, Health, MetricsRoute } from "@hosting/http"
import { Effect, Layer } from "effect"
import type { ServerConfig } from "./ServerConfig.js"

const otlpPrefix = `${HostingApi.basePath}/otlp/`

/**
 * Requests that get no span of their own: the probes and the metrics, which
 * are polled all day, and OTLP exports, since a server exporting to itself
 * would otherwise trace its own exports forever.
 */
export const untraced = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const path = ApiRoutes.pathOf(request.url)
  return path === Health.livePath || path === Health.readyPath || path === MetricsRoute.defaultPath || path.startsWith(otlpPrefix)
}

/**
 * The OTLP exporter behind Effect's tracer, through `@effect/opentelemetry`'s
 * tracer and resource (its `NodeSdk` would also load OpenTelemetry's logs
 * and metrics SDKs). Loaded only when traces are exported: a server without
 * them never loads OpenTelemetry.
 */
const exporter = (defaultServiceName: string | undefined) =>
  Layer.unwrapEffect(Effect.promise(async () => {
    const [OtelTracer, OtelResource, { BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
      import("@effect/opentelemetry/Tracer"),
      import("@effect/opentelemetry/Resource"),
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/exporter-trace-otlp-http")
    ])
    const provider = Layer.scoped(
      OtelTracer.OtelTracerProvider,
      Effect.flatMap(OtelResource.Resource, (resource) =>
        Effect.acquireRelease(
          Effect.sync(() => new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] })),
          // After the server has stopped: the spans still waiting are sent, for a few seconds at most.
          (provider) =>
            Effect.tryPromise(() => provider.shutdown()).pipe(Effect.ignoreLogged, Effect.interruptible, Effect.timeoutOption("3 seconds"))
        ))
    )
    // The resource is read from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; the default name only fills a gap.
    const resource = OtelResource.layerFromEnv(defaultServiceName === undefined ? undefined : { "service.name": defaultServiceName })
    return OtelTracer.layer.pipe(Layer.provide(provider), Layer.provide(resource))
  }))

/** `server` with the tracing of the configuration: spans exported over OTLP (ServerConfig.otlpTraces), or none. */
export const provide = (config: ServerConfig) => <A, E, R>(server: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  config.otlpTraces === undefined
    ? server.pipe(HttpMiddleware.withTracerDisabledWhen(() => true), Layer.provide(Layer.setTracerEnabled(false)))
    : server.pipe(HttpMiddleware.withTracerDisabledWhen(untraced), Layer.provide(exporter(config.otlpTraces.defaultServiceName)))
