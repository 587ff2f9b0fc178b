/**
 * The errors a client meets beyond the ones the API declares, and one way to
 * read any of them as `{ status, error, details }`.
 *
 * Error answers of the API arrive as the classes of `ApiErrors` (`NotFound`,
 * `Unauthorized`, ...), whose fields are the body `{ error, details }`. The
 * derived client decodes the ones each route declares; the helpers of this
 * package (event streams, transfers) decode every one through
 * `fromResponse`.
 */
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { ApiErrors } from "@hosting/api"
import { Effect, ParseResult, Predicate, Schema } from "effect"

/** An answer the API does not define: an unexpected status, or an error body that is not `{ error, details }` (a proxy's page, say). */
export class UnexpectedResponse extends Schema.TaggedError<UnexpectedResponse>()("UnexpectedResponse", {
  status: Schema.Number,
  body: Schema.String
}) {
  override get message() {
    return `unexpected answer ${this.status}${this.body === "" ? "" : `: ${this.body.slice(0, 200)}`}`
  }
}

/** A stream could not be re-established within the attempts allowed. */
export class ConnectionLost extends Schema.TaggedError<ConnectionLost>()("ConnectionLost", {
  attempts: Schema.Number,
  cause: Schema.Defect
}) {
  override get message() {
    return `the connection was lost and ${this.attempts} attempts to reconnect failed`
  }
}

/** The server sent something this client cannot read, such as event data of the wrong shape. */
export class ProtocolError extends Schema.TaggedError<ProtocolError>()("ProtocolError", {
  details: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  override get message() {
    return this.details
  }
}

/** Any error body of the API. */
export type ApiError = ApiErrors.ApiError

/** The status of each error class, read from the API definition. */
const statusOf = new Map<Function, number>(ApiErrors.classes.map((cls) => [cls, HttpApiSchema.getStatusError(cls)]))

/** True for the classes of `ApiErrors`: an error answer of the API. */
export const isApiError = (error: unknown): error is ApiError =>
  Predicate.isObject(error) && statusOf.has((error as object).constructor)

/** The HTTP status an API error class stands for. */
export const statusOfApiError = (error: ApiError): number => statusOf.get(error.constructor) ?? 500

const errorBody = Schema.Struct({ error: Schema.String, details: Schema.String })

// 400 has two classes: OAuthError when the body carries the OAuth description, else BadRequest.
const classFor = (status: number, body: unknown) => {
  const candidates = ApiErrors.classes.filter((cls) => statusOf.get(cls) === status)
  if (candidates.length <= 1) return candidates[0]
  const oauth = Predicate.hasProperty(body, "error_description")
  return candidates.find((cls) => (cls === ApiErrors.OAuthError) === oauth)
}

/**
 * The typed error of an error answer: its `ApiErrors` class when the status
 * and body are the API's, else `UnexpectedResponse`. Reads the body.
 */
export const fromResponse = (
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<never, ApiError | UnexpectedResponse> =>
  Effect.gen(function*() {
    const text = yield* Effect.orElseSucceed(response.text, () => "")
    let body: unknown = undefined
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON: left undefined
    }
    const cls = classFor(response.status, body)
    if (cls !== undefined && Schema.is(errorBody)(body)) {
      const decoded = yield* Effect.either(Schema.decodeUnknown(cls as Schema.Schema<ApiError, any>)(body))
      if (decoded._tag === "Right") return yield* Effect.fail(decoded.right)
    }
    return yield* new UnexpectedResponse({ status: response.status, body: text.slice(0, 4096) })
  })

/** What went wrong, in one shape for people and exit codes. */
export interface Problem {
  /** `response`: the server answered with an error; `network`: it could not be reached or the connection broke; `invalid`: the request could not be made or the answer not read. */
  readonly kind: "response" | "network" | "invalid"
  /** The HTTP status, for `response`. */
  readonly status: number | undefined
  /** A stable snake_case code: the body's `error`, or one of this client's own. */
  readonly error: string
  /** A sentence for people. */
  readonly details: string
}

const detailsOf = (error: unknown, fallback: string): string =>
  Predicate.hasProperty(error, "message") && typeof error.message === "string" && error.message !== "" ? error.message : fallback

/** The most telling reason in a chain of causes: `fetch failed` says less than the `ECONNREFUSED` under it. */
const networkReason = (cause: unknown): string => {
  let current: unknown = cause
  for (let depth = 0; depth < 5 && Predicate.isObject(current); depth++) {
    if (Predicate.hasProperty(current, "code") && typeof current.code === "string") return `${current.code}${detailsOf(current, "") === "" ? "" : ` (${detailsOf(current, "")})`}`
    if (!Predicate.hasProperty(current, "cause")) break
    current = current.cause
  }
  return detailsOf(cause, "the connection failed")
}

/**
 * Reads any failure of this package's functions or of the derived client as
 * a `Problem`. An answer with a status the route does not declare (a
 * `ResponseError`) has its body read for the `{ error, details }`.
 */
export const describe = (error: unknown): Effect.Effect<Problem> =>
  Effect.gen(function*() {
    if (isApiError(error)) {
      return { kind: "response", status: statusOfApiError(error), error: error.error, details: error.details } as const
    }
    if (error instanceof HttpApiError.HttpApiDecodeError) {
      return { kind: "response", status: 400, error: "invalid_request", details: error.message } as const
    }
    if (error instanceof UnexpectedResponse) {
      return {
        kind: "response",
        status: error.status,
        error: error.status >= 500 ? "server_error" : "unexpected_response",
        details: error.body.trim() === "" ? `The server answered ${error.status}.` : error.body.trim().slice(0, 300)
      } as const
    }
    if (error instanceof ConnectionLost) {
      return { kind: "network", status: undefined, error: "connection_lost", details: error.message } as const
    }
    if (error instanceof ProtocolError) {
      return { kind: "invalid", status: undefined, error: "protocol_error", details: error.details } as const
    }
    if (HttpClientError.isHttpClientError(error)) {
      if (error._tag === "ResponseError" && error.response.status >= 200 && error.response.status < 300) {
        // A good answer whose body broke off while it was read.
        return { kind: "network", status: undefined, error: "network_error", details: `The connection broke: ${networkReason(error.cause)}` } as const
      }
      if (error._tag === "ResponseError") {
        const typed = yield* Effect.flip(fromResponse(error.response))
        return yield* describe(typed)
      }
      if (error.reason === "Transport") {
        return {
          kind: "network",
          status: undefined,
          error: "network_error",
          details: `Could not reach ${error.request.url}: ${networkReason(error.cause)}`
        } as const
      }
      return { kind: "invalid", status: undefined, error: "invalid_request", details: detailsOf(error, "the request could not be made") } as const
    }
    if (ParseResult.isParseError(error)) {
      return { kind: "invalid", status: undefined, error: "invalid_answer", details: `The answer could not be read: ${error.message}` } as const
    }
    return { kind: "invalid", status: undefined, error: "unknown_error", details: detailsOf(error, String(error)) } as const
  })
