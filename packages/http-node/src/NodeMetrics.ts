/**
 * The server's metrics on Node, with `prom-client`: a registry holding
 * Node's process metrics (CPU, memory, event-loop lag, GC, handles), the
 * count and duration of answered requests by method, route template and
 * status, and what the services measure (Effect's metrics: streams,
 * replies, lags, storage), rendered in the Prometheus text format; served on the app's `/metrics`
 * (`@hosting/http`'s MetricsRoute) or on a port of its own (`listen`).
 */
import { Effect, Metric, type MetricPair, MetricState, Option, type Scope } from "effect"
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

/** The Prometheus value of a label or bucket bound. */
const boundText = (bound: number) => (bound === Number.POSITIVE_INFINITY ? "+Inf" : String(bound))

const labelsOf = (pair: MetricPair.MetricPair.Untyped) => {
  const labels: Record<string, string> = {}
  for (const label of pair.metricKey.tags) labels[label.key] = label.value
  return labels
}

/** The prom-client values of one Effect metric series. */
const valuesOf = (pair: MetricPair.MetricPair.Untyped): Array<Prometheus.MetricValueWithName<string>> => {
  const state = pair.metricState
  const name = pair.metricKey.name
  const labels = labelsOf(pair)
  if (MetricState.isCounterState(state)) return [{ value: Number(state.count), labels }]
  if (MetricState.isGaugeState(state)) return [{ value: Number(state.value), labels }]
  if (MetricState.isHistogramState(state)) {
    return [
      ...state.buckets.map(([bound, count]) => ({ metricName: `${name}_bucket`, value: count, labels: { ...labels, le: boundText(bound) } })),
      { metricName: `${name}_sum`, value: state.sum, labels },
      { metricName: `${name}_count`, value: state.count, labels }
    ]
  }
  return []
}

/** The Prometheus type of a series (prom-client's `MetricType` enum exists in its types only). */
const typeOf = (state: MetricState.MetricState.Untyped): "counter" | "gauge" | "histogram" | undefined =>
  MetricState.isCounterState(state)
    ? "counter"
    : MetricState.isGaugeState(state)
    ? "gauge"
    : MetricState.isHistogramState(state)
    ? "histogram"
    : undefined

/**
 * Effect's metrics (those the services keep: `@hosting/core`'s `Metrics`)
 * in the registry, rendered by prom-client with its own: before each
 * rendering, `refresh` reads Effect's registry once and registers the
 * metrics that appeared since (counters, gauges and histograms), whose
 * values are then read from that reading.
 */
const effectMetrics = (registry: Prometheus.Registry) => {
  let series = new Map<string, Array<MetricPair.MetricPair.Untyped>>()
  const registered = new Set<string>()
  return {
    refresh: () => {
      const next = new Map<string, Array<MetricPair.MetricPair.Untyped>>()
      for (const pair of Metric.unsafeSnapshot()) {
        const name = pair.metricKey.name
        const found = next.get(name)
        if (found === undefined) next.set(name, [pair])
        else found.push(pair)
        const type = typeOf(pair.metricState)
        if (registered.has(name) || type === undefined || registry.getSingleMetric(name) !== undefined) continue
        registered.add(name)
        const help = Option.getOrElse(pair.metricKey.description, () => name)
        // prom-client renders any object that gives its values this way (it is how its own metrics are read).
        const metric = {
          name,
          help,
          type,
          aggregator: "sum" as const,
          get: () => ({ name, help, type, aggregator: "sum" as const, values: (series.get(name) ?? []).flatMap(valuesOf) })
        }
        registry.registerMetric(metric as unknown as Prometheus.Metric)
      }
      series = next
    }
  }
}

/** The labels of a request series. */
type RequestLabels = { readonly method: string; readonly route: string; readonly status: string }

/** One series of the request metrics: how many answers fell in each duration bucket (the last: above every bound), their sum and count. */
interface RequestSeries {
  readonly labels: RequestLabels
  readonly counts: Array<number>
  sum: number
  count: number
}

/**
 * The request count and duration histogram, kept by this module and
 * rendered by prom-client (as `effectMetrics` renders Effect's): recording a
 * request is a map lookup and three additions, where prom-client's own
 * `observe` and `inc` validate and hash the labels on every call.
 */
const requestMetrics = (registry: Prometheus.Registry) => {
  const series = new Map<string, RequestSeries>()
  const bounds = durationBuckets
  const register = (name: string, help: string, type: "counter" | "histogram", values: () => Array<Prometheus.MetricValueWithName<string>>) => {
    const metric = { name, help, type, aggregator: "sum" as const, get: () => ({ name, help, type, aggregator: "sum" as const, values: values() }) }
    registry.registerMetric(metric as unknown as Prometheus.Metric)
  }
  const durations = "hosting_http_request_duration_seconds"
  register(durations, "Time from a request's arrival to its answer's head, by method, route template and status.", "histogram", () =>
    Array.from(series.values(), ({ count, counts, labels, sum }) => {
      let below = 0
      return [
        ...bounds.map((bound, i) => ({ metricName: `${durations}_bucket`, value: (below += counts[i]!), labels: { ...labels, le: boundText(bound) } })),
        { metricName: `${durations}_bucket`, value: count, labels: { ...labels, le: "+Inf" } },
        { metricName: `${durations}_sum`, value: sum, labels },
        { metricName: `${durations}_count`, value: count, labels }
      ]
    }).flat())
  register("hosting_http_requests_total", "Requests answered, by method, route template and status.", "counter", () =>
    Array.from(series.values(), ({ count, labels }) => ({ value: count, labels })))
  return (method: string, route: string, status: number, seconds: number) => {
    const key = `${method} ${status} ${route}`
    let found = series.get(key)
    if (found === undefined) {
      found = { labels: { method, route, status: String(status) }, counts: bounds.map(() => 0).concat(0), sum: 0, count: 0 }
      series.set(key, found)
    }
    let bucket = 0
    while (bucket < bounds.length && seconds > bounds[bucket]!) bucket++
    found.counts[bucket]!++
    found.sum += seconds
    found.count++
  }
}

/** A registry of its own, with Node's metrics, the request metrics and the services' metrics (Effect's registry, shared by the process). */
export const make = (): NodeMetrics => {
  const registry = new Prometheus.Registry()
  Prometheus.collectDefaultMetrics({ register: registry })
  const services = effectMetrics(registry)
  return {
    registry,
    observeRequest: requestMetrics(registry),
    render: () => {
      services.refresh()
      return registry.metrics()
    },
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
