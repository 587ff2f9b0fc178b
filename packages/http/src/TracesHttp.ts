/**
 * Handlers of the observability routes, and the media-type check of OTLP
 * ingestion.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { ApiErrors, HostingApi, TracesApi } from "@hosting/api"
import { Principal, Traces } from "@hosting/core"
import { Effect, Layer, Option } from "effect"
import * as ApiApp from "./ApiApp.js"
import { handle } from "./ErrorMapping.js"

/** Only JSON bodies, uncompressed: the OTLP/HTTP JSON encoding. */
export const otlpJsonOnly = Layer.succeed(
  TracesApi.OtlpJsonOnly,
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const type = (request.headers["content-type"] ?? "").toLowerCase()
    const encoding = (request.headers["content-encoding"] ?? "identity").toLowerCase().trim()
    if (!type.startsWith("application/json")) {
      return yield* Effect.fail(new ApiErrors.UnsupportedMediaType({
        error: "unsupported_media_type",
        details: "Send OTLP/HTTP JSON with Content-Type: application/json (exporter protocol http/json; protobuf is not accepted)."
      }))
    }
    if (encoding !== "identity") {
      return yield* Effect.fail(new ApiErrors.UnsupportedMediaType({
        error: "unsupported_media_type",
        details: `Content-Encoding ${encoding} is not accepted: send the export uncompressed (exporter compression none).`
      }))
    }
  })
)

export const layer = ApiApp.group(HostingApi.HostingApi, "traces", (handlers) =>
  Effect.gen(function*() {
    const traces = yield* Traces.Traces
    const caller = Principal.CurrentPrincipal
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(caller, (p) => handle(traces.list(p, path.account, path.name, urlParams))))
      .handle("ingest", ({ payload }) =>
        Effect.flatMap(caller, (p) => handle(traces.ingest(p, payload))).pipe(
          Effect.map((result) =>
            Option.match(result.errorMessage, {
              onNone: () => ({}),
              onSome: (errorMessage) => ({ partialSuccess: { rejectedSpans: String(result.rejectedSpans), errorMessage } })
            })
          )
        ))
  })).pipe(Layer.provide(otlpJsonOnly))
