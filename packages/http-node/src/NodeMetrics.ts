/**
 * The server's metrics on Node, with `prom-client`: a registry holding
 * Node's process metrics (CPU, memory, event-loop lag, GC, handles), and
 * the count and duration of answered requests by method, route template and
 * status,
 * rendered in the Prometheus text format; served on the app's `/metrics`
 * (`@hosting/http`'s MetricsRoute) or on a port of its own (`listen`).
 */
import { Effect, type Scope } from "effect"
import { createServer, type Server } from "node:http"
import * as Prometheus from "prom-client"

export interface NodeMetrics {
  readonly registry: Prometheus.Registry
  /** Records an answered request (RequestLog's `observe`). */
  readonly observeRequest: (method: string, route: string, status: number, seconds: number) => void
  readonly render: () => Promise<string>
  readonly contentType: string
}

/** Request durations in seconds: fine below 100 ms, where most answers fall, coarse above. */
export const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** A registry of its own (two servers in one process do not mix), with Node's metrics and the request histogram. */
export const make = (): NodeMetrics => {
  const registry = new Prometheus.Registry()
  Prometheus.collectDefaultMetrics({ register: registry })
  const requests = new Prometheus.Histogram({
    name: "hosting_http_request_duration_seconds",
    help: "Time from a request's arrival to its answer's head, by method, route template and status.",
    labelNames: ["method", "route", "status"] as const,
    buckets: durationBuckets,
    registers: [registry]
  })
  const answered = new Prometheus.Counter({
    name: "hosting_http_requests_total",
    help: "Requests answered, by method, route template and status.",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry]
  })
  const series = new Map<string, {
    readonly duration: Prometheus.Histogram.Internal<"method" | "route" | "status">
    readonly count: Prometheus.Counter.Internal
  }>()
  return {
    registry,
    observeRequest: (method, route, status, seconds) => {
      // The series of a method, route and status, found once: prom-client hashes the labels on every call otherwise.
      const key = `${method} ${status} ${route}`
      let found = series.get(key)
      if (found === undefined) {
        const labels = { method, route, status: String(status) }
        found = { duration: requests.labels(labels), count: answered.labels(labels) }
        series.set(key, found)
      }
      found.duration.observe(seconds)
      found.count.inc()
    },
    render: () => registry.metrics(),
    contentType: registry.contentType
  }
}

/**
 * Serves the metrics alone on `host:port` (for a port the public never
 * reaches), for the scope's life: `GET /metrics` answers them, anything else 404.
 */
export const listen = (
  metrics: NodeMetrics,
  options: { readonly port: number; readonly host?: string | undefined }
): Effect.Effect<Server, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<Server, Error>((resume) => {
      const server = createServer((request, response) => {
        if (request.method !== "GET" || (request.url ?? "").split("?")[0] !== "/metrics") {
          response.writeHead(404, { "content-type": "application/json" }).end(
            JSON.stringify({ error: "not_found", details: "This port serves GET /metrics only." })
          )
          return
        }
        metrics.render().then(
          (text) => response.writeHead(200, { "content-type": metrics.contentType, "cache-control": "no-store" }).end(text),
          () => response.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "internal_error", details: "The metrics could not be collected." }))
        )
      })
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen({ port: options.port, host: options.host }, () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )
