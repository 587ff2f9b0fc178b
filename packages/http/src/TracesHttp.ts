/**
 * Handlers of the observability routes, and how an OTLP export is read:
 * its media type (JSON or protobuf) and encoding (gzip or none) checked
 * before the body is read, the body inflated under the route's limit, and
 * the answer given in the request's encoding, as OTLP/HTTP specifies.
 */
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ApiErrors, HostingApi, TracesApi } from "@hosting/api"
import { Otlp, Principal, Traces } from "@hosting/core"
import { Effect, Layer, Option, ParseResult, Schema } from "effect"
import * as ApiApp from "./ApiApp.js"
import { handle } from "./ErrorMapping.js"
import { maxJsonDepth, parseJson, refailParseError } from "./ErrorResponses.js"
import * as Gunzip from "./Gunzip.js"
import * as OtlpProtobuf from "./OtlpProtobuf.js"
import * as JsonAnswer from "./internal/jsonAnswer.js"

/** How an export is encoded, by its `Content-Type`. */
type Format = "json" | "protobuf"

const formatOf = (request: HttpServerRequest.HttpServerRequest): Format | undefined => {
  const type = (request.headers["content-type"] ?? "").toLowerCase().split(";")[0]!.trim()
  return type === "application/json" ? "json" : type === OtlpProtobuf.contentType ? "protobuf" : undefined
}

/** Whether the body is gzip (`Content-Encoding: gzip`), or undefined for an encoding not taken. */
const gzippedOf = (request: HttpServerRequest.HttpServerRequest): boolean | undefined => {
  const encoding = (request.headers["content-encoding"] ?? "identity").toLowerCase().trim()
  return encoding === "gzip" ? true : encoding === "identity" || encoding === "" ? false : undefined
}

const unsupported = (details: string) => new ApiErrors.UnsupportedMediaType({ error: "unsupported_media_type", details })

/** OTLP/HTTP bodies only: JSON or protobuf, uncompressed or gzip. */
export const otlpMediaTypes = Layer.succeed(
  TracesApi.OtlpMediaTypes,
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (formatOf(request) === undefined) {
      return yield* Effect.fail(unsupported(
        "Send OTLP/HTTP with Content-Type: application/x-protobuf (exporter protocol http/protobuf) or application/json (http/json)."
      ))
    }
    if (gzippedOf(request) === undefined) {
      const encoding = (request.headers["content-encoding"] ?? "").trim()
      return yield* Effect.fail(unsupported(
        `Content-Encoding ${encoding} is not accepted: send the export gzip-compressed or uncompressed (exporter compression gzip or none).`
      ))
    }
  })
)

const badRequest = (error: string, details: string) => new ApiErrors.BadRequest({ error, details })

/** The bytes of the export, inflated when gzip, never more than the route's body limit. */
const bodyOf = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest) {
  // Past the limit the reading fails as the payload decoding's does (a defect that the error answers make a 413).
  const bytes = new Uint8Array(yield* Effect.orDie(request.arrayBuffer))
  if (gzippedOf(request) !== true) return bytes
  const max = yield* HttpIncomingMessage.MaxBodySize
  const limit = Option.match(max, { onNone: () => Number.POSITIVE_INFINITY, onSome: Number })
  return yield* Gunzip.gunzip(bytes, limit).pipe(Effect.mapError((failure) =>
    failure._tag === "TooLarge"
      ? new ApiErrors.PayloadTooLarge({
        error: "payload_too_large",
        details: `The request body inflates to more than the ${failure.limit} bytes this route accepts.`
      })
      : badRequest("invalid_request", "The request body is not valid gzip (Content-Encoding: gzip).")
  ))
})

const decodeExport = Schema.decodeUnknown(Otlp.ExportTraceServiceRequest)

/** True when an object nests deeper than `max` levels (a protobuf AnyValue may nest without end). */
const nestsDeeperThan = (value: unknown, max: number): boolean => {
  let level: Array<unknown> = [value]
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > max) return true
    const next: Array<unknown> = []
    for (const item of level) {
      if (typeof item === "object" && item !== null) for (const child of Object.values(item)) next.push(child)
    }
    level = next
  }
  return false
}

/** The export the request carries, in either encoding, validated as the JSON mapping is. */
const exportOf = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest, format: Format) {
  const bytes = yield* bodyOf(request)
  let value: unknown
  if (format === "json") {
    value = yield* parseJson(new TextDecoder().decode(bytes)).pipe(Effect.mapError(() =>
      badRequest("invalid_json", `The request body is not valid JSON (or nests more than ${maxJsonDepth} levels deep).`)
    ))
  } else {
    yield* OtlpProtobuf.ready
    const decoded = yield* Effect.try({
      try: () => OtlpProtobuf.decodeRequest(bytes),
      catch: () => badRequest("invalid_request", "The request body is not a protobuf ExportTraceServiceRequest.")
    })
    if (nestsDeeperThan(decoded, maxJsonDepth)) {
      return yield* Effect.fail(
        badRequest("invalid_request", `The export nests attribute values more than ${maxJsonDepth} levels deep.`)
      )
    }
    value = decoded
  }
  return yield* decodeExport(value).pipe(
    Effect.catchIf(ParseResult.isParseError, refailParseError)
  )
})

/** The OTLP answer of an export: `partialSuccess` only when spans were refused. */
const answerOf = (result: Traces.IngestResult): Otlp.ExportTraceServiceResponse =>
  Option.match(result.errorMessage, {
    onNone: () => ({}),
    onSome: (errorMessage) => ({ partialSuccess: { rejectedSpans: String(result.rejectedSpans), errorMessage } })
  })

export const layer = ApiApp.group(HostingApi.HostingApi, "traces", (handlers) =>
  Effect.gen(function*() {
    const traces = yield* Traces.Traces
    const caller = Principal.CurrentPrincipal
    // Made once: a generator function made in a handler is a new one for every request (docs/decisions.md,
    // "Generator functions made once").
    const ingest = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest) {
      const format = formatOf(request) ?? "json"
      const payload = yield* exportOf(request, format)
      const answer = answerOf(yield* handle(traces.ingest(yield* caller, payload)))
      return format === "json"
        ? JsonAnswer.json(answer)
        : HttpServerResponse.uint8Array(OtlpProtobuf.encodeResponse(answer), { contentType: OtlpProtobuf.contentType })
    })
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(caller, (p) => handle(traces.list(p, path.account, path.name, urlParams))))
      .handle("stats", ({ path, urlParams }) =>
        Effect.flatMap(caller, (p) => handle(traces.stats(p, path.account, path.name, urlParams))))
      .handle("get", ({ path }) =>
        Effect.flatMap(caller, (p) => handle(traces.get(p, path.account, path.name, path.traceId))))
      // Raw: the body is read here, in the encoding its headers name, not by the payload's JSON decoding.
      .handleRaw("ingest", ({ request }) => ingest(request))
  })).pipe(Layer.provide(otlpMediaTypes))
