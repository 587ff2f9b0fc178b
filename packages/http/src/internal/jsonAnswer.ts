/**
 * JSON answers that keep the text `JSON.stringify` made, where the
 * platform's `HttpServerResponse.unsafeJson` encodes it to bytes at once.
 *
 * A server that writes text ends the answer with its headers in one write
 * (Node joins them when both are text and sends one buffer); bytes go out
 * as two, headers and body, after the text was copied into a buffer of its
 * own. On a 500-byte answer the encoding alone took 1.8 to 3 µs here, and
 * node:http answering the same body as text cost 1.6 to 3 µs less CPU a
 * request than as bytes (docs/performance.md, "JSON answers kept as
 * text"). The answer says its length, as the platform's does, so a server
 * need not count it, and the access line has its size.
 *
 * Readers of an answer's JSON (the request log's 5xx details, OTLP's error
 * answers) take it with `textOf`, which reads both kinds of body.
 */
import * as Headers from "@effect/platform/Headers"
import type * as HttpBody from "@effect/platform/HttpBody"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

const encoder = new TextEncoder()
/** Room to encode a text into only to count its bytes: a text of up to a third as many code units always fits. */
const scratch = new Uint8Array(192 * 1024)

/**
 * The length of a text in UTF-8, as `TextEncoder` encodes it (an unpaired
 * surrogate as U+FFFD: three bytes). Counted by encoding it into room kept
 * for that, which costs no allocation and, done by the platform's encoder,
 * less than a test of the text in JavaScript (0.2 µs for 3,000 characters,
 * a regular expression's ASCII test 1 µs); a longer text is encoded anew.
 */
export const utf8Length = (text: string): number =>
  text.length * 3 <= scratch.length ? encoder.encodeInto(text, scratch).written : encoder.encode(text).length

/**
 * As `HttpServerResponse.unsafeJson` (the same status, headers, cookies and
 * content type; it throws where `JSON.stringify` throws), with the text as
 * the body and its length in UTF-8 given.
 */
export const json = (value: unknown, options?: HttpServerResponse.Options.WithContentType): HttpServerResponse.HttpServerResponse => {
  const text = JSON.stringify(value) as string | undefined
  // Nothing to write as JSON (`undefined`, a function): the platform's answer, whatever it makes of it.
  if (text === undefined) return HttpServerResponse.unsafeJson(value, options)
  return ofText(text, options)
}

/** The answer of JSON already written as text (a kept answer), as `json` makes it. */
export const ofText = (text: string, options?: HttpServerResponse.Options.WithContentType): HttpServerResponse.HttpServerResponse => {
  const headers = options?.headers === undefined ? undefined : Headers.fromInput(options.headers)
  return HttpServerResponse.raw(text, {
    status: options?.status,
    statusText: options?.statusText,
    headers,
    cookies: options?.cookies,
    contentType: options?.contentType ?? headers?.["content-type"] ?? "application/json",
    contentLength: utf8Length(text)
  })
}

const decoder = new TextDecoder()

/** The text of a body in hand (bytes, or text kept as it is); undefined for any other body. */
export const textOf = (body: HttpBody.HttpBody): string | undefined => {
  if (body._tag === "Uint8Array") return decoder.decode(body.body)
  if (body._tag === "Raw" && typeof body.body === "string") return body.body
  return undefined
}
