/**
 * Observability: an agent's traces, and OTLP/HTTP ingestion (protobuf or
 * JSON, gzip or not) of the spans an agent exports.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, Otlp, Trace, TraceStats } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Forbidden, NotFound, PayloadTooLarge, ServiceUnavailable, UnsupportedMediaType } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"
import { Digits, pageFields } from "./Paging.js"
import { BodyLimit, RequiredScope } from "./RouteFacts.js"

const account = HttpApiSchema.param("account", Ids.AccountName)
const name = HttpApiSchema.param("name", Ids.AgentName)

/** A trace id: an OpenTelemetry one (32 hex digits) or the id a fixture gave, at most 64 letters, digits, `.`, `_` or `-`. */
export const TraceId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9._-]{1,64}$/, { message: () => "must be a trace id (1 to 64 letters, digits, '.', '_' or '-')" }),
  Schema.annotations({ identifier: "TraceId", description: "A trace id, such as the 32 hexadecimal digits of an OpenTelemetry trace" })
)
const traceId = HttpApiSchema.param("traceId", TraceId)

/** A model name to filter by: 1 to 256 characters. */
export const ModelName = Schema.String.pipe(
  Schema.minLength(1, { message: () => "model: must be 1 to 256 characters" }),
  Schema.maxLength(256, { message: () => "model: must be 1 to 256 characters" })
)

/** A `next_cursor` given back: opaque text, checked by the listing. */
export const Cursor = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9._-]{1,200}$/, { message: () => "cursor: must be a next_cursor of an earlier page" })
)

export const TracesParams = Schema.Struct({
  start_time: Schema.optional(Trace.Rfc3339),
  end_time: Schema.optional(Trace.Rfc3339),
  status: Schema.optional(Trace.TraceStatus),
  model: Schema.optional(ModelName).annotations({ description: "Only traces whose model (the first their spans name) is this" }),
  cursor: Schema.optional(Cursor).annotations({
    description: "The next_cursor of an earlier page: the page after it (not with offset)"
  }),
  ...pageFields("Traces", Trace.maxPageSize, Trace.defaultPageSize)
})

export const TracesPage = Schema.Struct({
  traces: Schema.Array(Trace.Trace),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int,
  /** Where the next page starts (pass it as `cursor`); null on the last page. */
  next_cursor: Schema.NullOr(Schema.String)
})

export const TraceStatsParams = Schema.Struct({
  start_time: Trace.Rfc3339,
  end_time: Trace.Rfc3339,
  buckets: Schema.optional(Digits("buckets").pipe(
    Schema.between(1, TraceStats.maxBuckets, { message: () => `buckets: must be from 1 to ${TraceStats.maxBuckets}` })
  )).annotations({ description: `Buckets the window is cut into, from 1 to ${TraceStats.maxBuckets} (default ${TraceStats.defaultBuckets})` })
})

/** The OTLP/HTTP protobuf encoding of an export: an `ExportTraceServiceRequest` message. */
export const OtlpProtobufExport = Schema.Uint8ArrayFromSelf.pipe(
  HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "application/x-protobuf" }),
  Schema.annotations({
    identifier: "OtlpProtobufExport",
    description: "OTLP/HTTP protobuf trace export (opentelemetry-proto ExportTraceServiceRequest)"
  })
)

/** The media types an export may come in: OTLP/HTTP JSON and OTLP/HTTP protobuf. */
export const OtlpExport = Schema.Union(Otlp.ExportTraceServiceRequest, OtlpProtobufExport)

/**
 * Refuses, before the body is read, OTLP bodies in a media type other than
 * `application/json` or `application/x-protobuf`, or with a
 * `Content-Encoding` other than `gzip` (or none).
 */
export class OtlpMediaTypes extends HttpApiMiddleware.Tag<OtlpMediaTypes>()("@hosting/api/OtlpMediaTypes", {
  failure: UnsupportedMediaType
}) {}

export class TracesApi extends HttpApiGroup.make("traces")
  .add(
    HttpApiEndpoint.get("list")`/agents/${account}/${name}/observability/traces`
      .setUrlParams(TracesParams)
      .addSuccess(TracesPage)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(ServiceUnavailable)
      .annotate(
        OpenApi.Summary,
        "An agent's traces, newest first, filtered by time window, status and model, paged by offset or cursor (members of the agent's account or of an account deploying it)"
      )
  )
  .add(
    HttpApiEndpoint.get("stats")`/agents/${account}/${name}/observability/traces/stats`
      .setUrlParams(TraceStatsParams)
      .addSuccess(TraceStats.TraceStats)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(ServiceUnavailable)
      .annotate(
        OpenApi.Summary,
        "Latency percentiles (p50, p95) and error rate of an agent's traces per time bucket over a window (the traces the caller would list)"
      )
  )
  .add(
    HttpApiEndpoint.get("get")`/agents/${account}/${name}/observability/traces/${traceId}`
      .addSuccess(Trace.TraceDetail)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(ServiceUnavailable)
      .annotate(
        OpenApi.Summary,
        "One trace of an agent with its span tree (the same readers as the listing; a trace the caller may not see is 404)"
      )
  )
  .add(
    HttpApiEndpoint.post("ingest")`/otlp/v1/traces`
      .annotate(RequiredScope, "deploy")
      // OTLP batches.
      .annotate(BodyLimit, "server")
      .setPayload(OtlpExport)
      .addSuccess(Otlp.ExportTraceServiceResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(PayloadTooLarge)
      .addError(ServiceUnavailable)
      .addError(UnsupportedMediaType)
      .middleware(OtlpMediaTypes)
      .annotate(
        OpenApi.Summary,
        "OTLP/HTTP trace export: each root span becomes a trace of the agent named by service.name (<account>/<agent>)"
      )
      .annotate(
        OpenApi.Description,
        "Protobuf (application/x-protobuf) or JSON (application/json), optionally with Content-Encoding: gzip " +
          "(the inflated body is bounded like the body itself: 413 past it). A protobuf export is answered with a " +
          "protobuf ExportTraceServiceResponse, a JSON export with its JSON mapping; errors are the {error, details} JSON body."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Observability")
  .annotate(OpenApi.Description, "Traces of an agent, and OTLP/HTTP ingestion of the spans agents export")
{}
