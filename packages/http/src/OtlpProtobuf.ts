/**
 * OTLP/HTTP protobuf (`application/x-protobuf`): an `ExportTraceServiceRequest`
 * decoded into its JSON mapping, which `Otlp.ExportTraceServiceRequest`
 * then validates as it validates a JSON export, and the
 * `ExportTraceServiceResponse` encoded for the answer. The messages are
 * those of opentelemetry-proto, read by protobufjs (docs/decisions.md).
 */
import type { Otlp } from "@hosting/core"
import { Effect } from "effect"
import type protobuf from "protobufjs"
import { files } from "./internal/otlpProtos.js"

/** The media type of OTLP/HTTP protobuf. */
export const contentType = "application/x-protobuf"

/** protobufjs, once `ready` loaded it. */
let library: typeof protobuf | undefined

/**
 * Loads protobufjs the first time a protobuf export arrives (about 10 MB of
 * memory): a server that is never sent one does not pay for it. Run before
 * `decodeRequest` and `encodeResponse`.
 */
export const ready: Effect.Effect<void> = Effect.suspend(() =>
  library !== undefined ? Effect.void : Effect.promise(async () => {
    library = (await import("protobufjs")).default
  })
)

let types: { readonly request: protobuf.Type; readonly response: protobuf.Type; readonly status: protobuf.Type } | undefined

/** The two messages of the trace service, parsed once, when first needed. */
const messages = () => {
  if (types !== undefined) return types
  if (library === undefined) throw new Error("OtlpProtobuf.ready must run before protobuf is decoded or encoded")
  const root = new library.Root()
  for (const file of files) library.parse(file, root)
  root.resolveAll()
  types = {
    request: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"),
    response: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse"),
    status: statusType(library)
  }
  return types
}

/**
 * `google.rpc.Status` (googleapis google/rpc/status.proto), the body of an
 * OTLP/HTTP protobuf error: `code` and `message`. Its `details` (field 3,
 * `google.protobuf.Any`) are never sent, so they are not declared.
 */
const statusType = (library: typeof protobuf) =>
  new library.Root().define("google.rpc").add(
    new library.Type("Status").add(new library.Field("code", 1, "int32")).add(new library.Field("message", 2, "string"))
  ).lookupType("google.rpc.Status")

/** The `google.rpc.Code` of an HTTP error status, as google.rpc.Code documents their correspondence. */
export const rpcCodeOf = (status: number): number => {
  switch (status) {
    case 401:
      return 16 // UNAUTHENTICATED
    case 403:
      return 7 // PERMISSION_DENIED
    case 404:
      return 5 // NOT_FOUND
    case 409:
      return 10 // ABORTED
    case 429:
      return 8 // RESOURCE_EXHAUSTED
    case 501:
      return 12 // UNIMPLEMENTED
    case 503:
      return 14 // UNAVAILABLE
    case 504:
      return 4 // DEADLINE_EXCEEDED
    default:
      return status >= 500 ? 13 : 3 // INTERNAL; INVALID_ARGUMENT for the other 4xx (400, 413, 415)
  }
}

/** The protobuf `google.rpc.Status` of an error answer. */
export const encodeStatus = (code: number, message: string): Uint8Array => {
  const { status } = messages()
  return status.encode(status.fromObject({ code, message })).finish()
}

/** Reads a `google.rpc.Status` (for tests and clients of this module). */
export const decodeStatus = (bytes: Uint8Array): { readonly code: number; readonly message: string } => {
  const { status } = messages()
  const decoded = status.toObject(status.decode(bytes), { defaults: true }) as { code: number; message: string }
  return { code: decoded.code, message: decoded.message }
}

const hexOf = (base64: unknown): unknown => {
  if (typeof base64 !== "string") return base64
  const binary = atob(base64)
  let hex = ""
  for (let i = 0; i < binary.length; i++) hex += binary.charCodeAt(i).toString(16).padStart(2, "0")
  return hex
}

/**
 * Trace and span ids are bytes in protobuf and hexadecimal in OTLP's JSON
 * mapping (its one exception to the base64 of `bytes`).
 */
const idsToHex = (request: Record<string, any>) => {
  for (const resource of request["resourceSpans"] ?? []) {
    for (const scope of resource?.scopeSpans ?? []) {
      for (const span of scope?.spans ?? []) {
        for (const key of ["traceId", "spanId", "parentSpanId"]) {
          if (key in span) span[key] = hexOf(span[key])
        }
        for (const link of span.links ?? []) {
          for (const key of ["traceId", "spanId"]) if (key in link) link[key] = hexOf(link[key])
        }
      }
    }
  }
  return request
}

/**
 * The JSON mapping of a protobuf `ExportTraceServiceRequest` (camelCase
 * fields, 64-bit integers as decimal strings, enums as numbers, ids as hex,
 * other bytes as base64, fields at their defaults left out). Throws when
 * the bytes are not such a message.
 */
export const decodeRequest = (bytes: Uint8Array): unknown => {
  const { request } = messages()
  const message = request.decode(bytes)
  return idsToHex(request.toObject(message, { longs: String, enums: Number, bytes: String, defaults: false }))
}

/** The protobuf `ExportTraceServiceResponse` of an answer (empty when everything was taken). */
export const encodeResponse = (answer: Otlp.ExportTraceServiceResponse): Uint8Array => {
  const { response } = messages()
  const partial = answer.partialSuccess
  const value = partial === undefined
    ? {}
    : { partialSuccess: { rejectedSpans: partial.rejectedSpans, errorMessage: partial.errorMessage } }
  return response.encode(response.fromObject(value)).finish()
}
