/**
 * What an operator sees of each request: a request id, and one access line.
 *
 * - The request id is the caller's `X-Request-Id` when it is a short token
 *   of safe characters, else the trace id of a valid W3C `traceparent`,
 *   else a new one. It is answered in `X-Request-Id` and named in the
 *   `details` of every 5xx, so that a user's report finds the log line.
 * - The access line (when on) is one log entry per request, at level Info,
 *   message `request`, annotated with the method, the route's template (not
 *   the path: ids stay out of the log and lines group by route), the status,
 *   the duration in ms, the body's bytes when known, the user id once
 *   authenticated, and the request id. Never a header, a query or a body.
 *
 * The notes of a request are where the request path writes what only it
 * learns (the route, from the router; the user, from authentication): a
 * record kept on the request object itself under a symbol, so that no
 * context is copied for it, and read when the answer is made.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Context, Effect } from "effect"
import { withRequest } from "./internal/currentRequest.js"
import * as JsonAnswer from "./internal/jsonAnswer.js"

/** What the request path learned about one request. */
export interface Notes {
  readonly id: string
  /** The route's template (`/api/v1/accounts/:account`), once routed. */
  route: string | undefined
  /** The authenticated user's id, once known. */
  user: string | undefined
}

const notesKey = Symbol.for("@hosting/http/RequestLog/notes")

/** The notes of a request (none when no request log wraps the app). */
export const notesOf = (request: HttpServerRequest.HttpServerRequest): Notes | undefined =>
  (request as unknown as Record<symbol, Notes | undefined>)[notesKey]

/** The header a request id travels in, both ways. */
export const header = "x-request-id"

const safeId = /^[A-Za-z0-9._:@-]{1,128}$/
const traceparent = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/

/** This process's part of the ids it makes: 64 random bits, in hex. */
const processPart = (() => {
  let out = ""
  for (const byte of globalThis.crypto.getRandomValues(new Uint8Array(8))) out += byte.toString(16).padStart(2, "0")
  return out
})()
let made = 0

/**
 * A new request id, the size of a trace id: this process's random part,
 * then a counter (unique among the ids of every process, and cheap).
 */
const newId = (): string => `${processPart}${(made++).toString(16).padStart(16, "0")}`

/** The request id of a request's headers: its own, its trace's, or a new one. */
export const requestIdOf = (headers: Readonly<Record<string, string | undefined>>): string => {
  const given = headers[header]
  if (given !== undefined && safeId.test(given)) return given
  const trace = headers["traceparent"]
  const match = trace === undefined ? null : traceparent.exec(trace)
  if (match !== null && !/^0+$/.test(match[1]!)) return match[1]!
  return newId()
}

/** Records the route a request took (the router calls it), when the request is noted. */
export const noteRoute = (request: HttpServerRequest.HttpServerRequest, route: string): void => {
  const notes = notesOf(request)
  if (notes !== undefined) notes.route = route
}

/** Records the authenticated user of a request, when it is noted. */
export const noteUser = (request: HttpServerRequest.HttpServerRequest, user: string): void => {
  const notes = notesOf(request)
  if (notes !== undefined) notes.user = user
}

/** A 5xx JSON answer whose `details` also names the request id (any other answer as it is). */
const withIdInDetails = (response: HttpServerResponse.HttpServerResponse, id: string): HttpServerResponse.HttpServerResponse => {
  const body = response.body
  if (response.status < 500 || body.contentType === undefined || !body.contentType.startsWith("application/json")) return response
  const text = JsonAnswer.textOf(body)
  if (text === undefined) return response
  try {
    const value = JSON.parse(text) as Record<string, unknown>
    if (typeof value["details"] !== "string") return response
    const details = `${value["details"]} Request id: ${id}.`
    return JsonAnswer.json({ ...value, details }, {
      status: response.status,
      headers: response.headers,
      cookies: response.cookies
    })
  } catch {
    return response
  }
}

/** The size of an answer's body when it is known before it is sent. */
const bytesOf = (response: HttpServerResponse.HttpServerResponse): number | undefined => {
  const body = response.body
  switch (body._tag) {
    case "Uint8Array":
      return body.body.byteLength
    case "Empty":
      return 0
    default:
      return body.contentLength
  }
}

export interface RequestLogOptions {
  /** Whether each request writes its access line. */
  readonly accessLog: boolean
  /**
   * Writes an access line directly (a server's own sink, much cheaper than a
   * logger call); without it lines go through Effect's logger at Info.
   */
  readonly writeAccessLine?: ((annotations: Readonly<Record<string, unknown>>) => void) | undefined
  /** Told of every answered request (a metrics registry's histogram): its method, route template, status and seconds. */
  readonly observe?: ((method: string, route: string, status: number, seconds: number) => void) | undefined
}

/** The request log's settings, read by the served app: no access line unless a server asks for it. */
export class RequestLogConfig extends Context.Reference<RequestLogConfig>()("@hosting/http/RequestLogConfig", {
  defaultValue: (): RequestLogOptions => ({ accessLog: false })
}) {}

/**
 * Wraps an app: each request gets its notes and its id (answered in
 * `X-Request-Id` and in the details of a 5xx), and, when on, its access line.
 */
export const wrap = (options: RequestLogOptions) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> => {
  const accessLog = options.accessLog
  const write = options.writeAccessLine
  const observe = options.observe
  const timed = accessLog || observe !== undefined
  return withRequest((request) => {
    const notes: Notes = { id: requestIdOf(request.headers), route: undefined, user: undefined }
    ;(request as unknown as Record<symbol, Notes>)[notesKey] = notes
    const started = timed ? performance.now() : 0
    return app.pipe(
      Effect.flatMap((response) => {
        const answered = HttpServerResponse.setHeader(withIdInDetails(response, notes.id), header, notes.id)
        if (!timed) return Effect.succeed(answered)
        const elapsed = performance.now() - started
        if (observe !== undefined) observe(request.method, notes.route ?? "-", answered.status, elapsed / 1000)
        if (!accessLog) return Effect.succeed(answered)
        const annotations: Record<string, unknown> = {
          method: request.method,
          route: notes.route ?? "-",
          status: answered.status,
          duration_ms: Math.round(elapsed * 100) / 100,
          request_id: notes.id
        }
        const bytes = bytesOf(answered)
        if (bytes !== undefined) annotations["bytes"] = bytes
        if (notes.user !== undefined) annotations["user"] = notes.user
        if (write !== undefined) {
          write(annotations)
          return Effect.succeed(answered)
        }
        return Effect.as(Effect.annotateLogs(Effect.logInfo("request"), annotations), answered)
      })
    )
  })
}
