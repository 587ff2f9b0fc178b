/**
 * Observability: an agent's traces, and OTLP/HTTP JSON ingestion of the
 * spans an agent exports.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, Otlp, Trace } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Forbidden, NotFound, ServiceUnavailable, UnsupportedMediaType } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"
import { pageFields } from "./Paging.js"
import { BodyLimit, RequiredScope } from "./RouteFacts.js"

const account = HttpApiSchema.param("account", Ids.AccountName)
const name = HttpApiSchema.param("name", Ids.AgentName)

export const TracesParams = Schema.Struct({
  start_time: Schema.optional(Trace.Rfc3339),
  end_time: Schema.optional(Trace.Rfc3339),
  status: Schema.optional(Trace.TraceStatus),
  ...pageFields("Traces", Trace.maxPageSize, Trace.defaultPageSize)
})

export const TracesPage = Schema.Struct({
  traces: Schema.Array(Trace.Trace),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
})

/** Refuses OTLP bodies that are not JSON (protobuf exporters must switch to http/json) before the body is read. */
export class OtlpJsonOnly extends HttpApiMiddleware.Tag<OtlpJsonOnly>()("@hosting/api/OtlpJsonOnly", {
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
        "An agent's traces, newest first, filtered by time window and status (members of the agent's account or of an account deploying it)"
      )
  )
  .add(
    HttpApiEndpoint.post("ingest")`/otlp/v1/traces`
      .annotate(RequiredScope, "deploy")
      // OTLP batches.
      .annotate(BodyLimit, "server")
      .setPayload(Otlp.ExportTraceServiceRequest)
      .addSuccess(Otlp.ExportTraceServiceResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(ServiceUnavailable)
      .addError(UnsupportedMediaType)
      .middleware(OtlpJsonOnly)
      .annotate(
        OpenApi.Summary,
        "OTLP/HTTP JSON trace export: each root span becomes a trace of the agent named by service.name (<account>/<agent>)"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Observability")
  .annotate(OpenApi.Description, "Traces of an agent, and OTLP/HTTP JSON ingestion of the spans agents export")
{}
