/**
 * Errors of OTLP/HTTP protobuf exports as the OTLP/HTTP specification asks:
 * "the response body for all HTTP 4xx and HTTP 5xx responses MUST be a
 * Protobuf-encoded Status message" when the request was protobuf. Every
 * failure of the ingest route is first the `{error, details}` JSON answer
 * (ErrorResponses); for a protobuf request it becomes a `google.rpc.Status`
 * with the same HTTP status and headers, the code its status corresponds to
 * and `<error>: <details>` as its message. JSON requests keep the JSON body.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import * as OtlpProtobuf from "./OtlpProtobuf.js"
import { withRequest } from "./internal/currentRequest.js"
import * as JsonAnswer from "./internal/jsonAnswer.js"

/** The path of the ingest route, under any base path. */
const ingestPath = /\/otlp\/v1\/traces\/?$/

/** Whether the request is an OTLP export in protobuf. */
const isProtobufExport = (request: HttpServerRequest.HttpServerRequest) =>
  request.method === "POST" &&
  ingestPath.test(new URL(request.url, "http://x").pathname) &&
  (request.headers["content-type"] ?? "").toLowerCase().split(";")[0]!.trim() === OtlpProtobuf.contentType

/** The `error` and `details` of a JSON error answer (what there is of them). */
const errorOf = (response: HttpServerResponse.HttpServerResponse): { error: string; details: string } => {
  const text = JsonAnswer.textOf(response.body)
  if (text === undefined) return { error: "error", details: "" }
  try {
    const body = JSON.parse(text) as { error?: unknown; details?: unknown }
    return {
      error: typeof body.error === "string" ? body.error : "error",
      details: typeof body.details === "string" ? body.details : ""
    }
  } catch {
    return { error: "error", details: "" }
  }
}

/** An error answer to a protobuf export as a protobuf `google.rpc.Status`; any other answer as it is. */
export const inEncoding = (
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  response.status < 400
    ? Effect.succeed(response)
    : withRequest((request) => {
      if (!isProtobufExport(request)) return Effect.succeed(response)
      const { details, error } = errorOf(response)
      return Effect.map(OtlpProtobuf.ready, () => {
        const body = OtlpProtobuf.encodeStatus(OtlpProtobuf.rpcCodeOf(response.status), details === "" ? error : `${error}: ${details}`)
        const headers = Object.fromEntries(
          Object.entries(response.headers).filter(([name]) => name !== "content-type" && name !== "content-length")
        )
        return HttpServerResponse.uint8Array(body, { status: response.status, headers, contentType: OtlpProtobuf.contentType })
      })
    })
