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

let types: { readonly request: protobuf.Type; readonly response: protobuf.Type } | undefined

/** The two messages of the trace service, parsed once, when first needed. */
const messages = () => {
  if (types !== undefined) return types
  if (library === undefined) throw new Error("OtlpProtobuf.ready must run before protobuf is decoded or encoded")
  const root = new library.Root()
  for (const file of files) library.parse(file, root)
  root.resolveAll()
  types = {
    request: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"),
    response: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse")
  }
  return types
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
