/**
 * `GET /metrics` on the served app: the text a metrics registry renders
 * (the Prometheus exposition format), from whatever registry the server
 * keeps (`@hosting/http-node`'s NodeMetrics on Node). Outside `/api/v1`, as
 * the probes are, and never cached.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"

/** What renders the metrics. */
export interface MetricsSource {
  readonly render: () => Promise<string>
  readonly contentType: string
}

/** The path metrics are served at by default. */
export const defaultPath = "/metrics"

/** Serves `source` at `path` (default `/metrics`). */
export const layer = (source: MetricsSource, path = defaultPath) =>
  HttpApiBuilder.Router.use((router) =>
    router.get(
      path as `/${string}`,
      Effect.map(Effect.promise(source.render), (text) =>
        HttpServerResponse.text(text, { contentType: source.contentType, headers: { "cache-control": "no-store" } }))
    )
  )
