/**
 * Makes every failure that escapes a handler an `{ error, details }` JSON
 * answer: schema decode errors, malformed JSON, oversize bodies, unknown
 * routes and defects. A defect is logged with its cause and answered with a
 * bare 500 that shows no internals.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Multipart from "@effect/platform/Multipart"
import { ApiErrors } from "@hosting/api"
import { SchemaIssues } from "@hosting/core"
import { Cause, Effect, Option, type Schema } from "effect"
import * as BodyLimits from "./BodyLimits.js"
import { internalDetails } from "./ErrorMapping.js"

const isApiError = (u: unknown): u is ApiErrors.ApiError => ApiErrors.classes.some((cls) => u instanceof cls)

/** The JSON answer of an API error, with the status its class is annotated with. */
export const apiErrorResponse = (error: ApiErrors.ApiError): HttpServerResponse.HttpServerResponse => {
  const status = HttpApiSchema.getStatusErrorAST((error.constructor as unknown as Schema.Schema.Any).ast)
  const body: Record<string, string> = { error: error.error, details: error.details }
  if (error instanceof ApiErrors.Conflict) body["code"] = error.code
  if (error instanceof ApiErrors.OAuthError) body["error_description"] = error.error_description
  return HttpServerResponse.unsafeJson(body, { status })
}

/** An `{ error, details }` answer with the given status (and headers). */
export const json = (status: number, error: string, details: string, headers?: Record<string, string>) =>
  HttpServerResponse.unsafeJson({ error, details }, headers === undefined ? { status } : { status, headers })

/** One line per problem, each naming where it is: `version: must be a semantic version ...`. */
export const decodeDetails = (error: HttpApiError.HttpApiDecodeError): string =>
  error.issues.length === 0 ? "The request is not valid." : `Invalid request: ${SchemaIssues.formatIssues(error.issues)}`

const isBodyTooLarge = (error: HttpServerError.RequestError) =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"

/** The answer for any failure or defect of a request; interruptions stay interruptions. */
export const causeResponse = <E>(
  cause: Cause.Cause<E>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
    const error = Cause.squash(cause)
    if (HttpServerResponse.isServerResponse(error)) return error
    if (isApiError(error)) return apiErrorResponse(error)
    if (error instanceof HttpApiError.HttpApiDecodeError) {
      return json(400, "invalid_request", decodeDetails(error))
    }
    // No route takes multipart bodies, but the platform parses one sent to a JSON route.
    if (error instanceof Multipart.MultipartError) {
      return error.reason === "Parse"
        ? json(400, "invalid_request", "The request body is not valid multipart/form-data.")
        : error.reason === "InternalError"
        ? json(500, "internal_error", internalDetails)
        : json(413, "payload_too_large", "The request body is larger than this route accepts.")
    }
    if (HttpServerError.isServerError(error)) {
      const request = yield* HttpServerRequest.HttpServerRequest
      switch (error._tag) {
        case "RouteNotFound":
          return json(404, "not_found", `No route for ${request.method} ${new URL(request.url, "http://x").pathname}.`)
        case "RequestError":
          if (error.reason === "Decode") {
            return isBodyTooLarge(error)
              ? json(413, "payload_too_large", "The request body is larger than this route accepts.")
              : error.cause === tooDeep
              ? json(400, "invalid_json", `The request body nests arrays or objects more than ${maxJsonDepth} levels deep.`)
              : json(400, "invalid_json", "The request body is not valid JSON.")
          }
      }
    }
    yield* Effect.logError("request failed", cause)
    return json(500, "internal_error", internalDetails)
  })

/** Deepest nesting of arrays and objects a JSON body may have: decoding and error messages recurse into it. */
export const maxJsonDepth = 64

/** True when the JSON text nests arrays and objects deeper than `max` (strings are skipped; the text need not be valid). */
export const nestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

const tooDeep = new Error(`nested more than ${maxJsonDepth} levels deep`)

/**
 * The request with a `json` that refuses a body nested deeper than
 * `maxJsonDepth` before parsing it, so that nothing downstream recurses into
 * it. The body is still read when the API decodes the payload, as before.
 */
const withDepthLimit = (request: HttpServerRequest.HttpServerRequest): HttpServerRequest.HttpServerRequest => {
  const json = Effect.flatMap(request.text, (text) =>
    nestsDeeperThan(text, maxJsonDepth)
      ? Effect.fail(new HttpServerError.RequestError({ request, reason: "Decode", cause: tooDeep }))
      : request.json)
  return new Proxy(request, { get: (target, key) => key === "json" ? json : Reflect.get(target, key, target) })
}

/** Requests without a body (GET, HEAD, DELETE without one) keep the plain request. */
const limitDepth = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    request.method === "GET" || request.method === "HEAD" ||
      (request.headers["content-length"] === undefined && request.headers["transfer-encoding"] === undefined)
      ? app
      : Effect.provideService(app, HttpServerRequest.HttpServerRequest, withDepthLimit(request)))

/** File uploads stream to the object store; their limit is the size reserved for the file. */
const fileUpload = /^\/api\/v1\/deployments\/[^/]+\/files\/[^/]+\/content$/

/**
 * Refuses bodies whose declared length is over the route's limit
 * (BodyLimits) before reading them, and caps the rest.
 */
const limitBody = (maxBodyBytes: number) => <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const pathname = new URL(request.url, "http://x").pathname
    if (request.method === "PUT" && fileUpload.test(pathname)) return yield* app
    const limit = BodyLimits.limitFor(request.method, pathname, maxBodyBytes)
    const declared = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > limit) {
      return json(413, "payload_too_large", `The request body is larger than the ${limit} bytes this route accepts.`)
    }
    return yield* HttpServerRequest.withMaxBodySize(limitDepth(app), Option.some(limit))
  })

/** The API-level middleware that applies the body limit and turns every failure into the error body. */
export const layer = (options: { readonly maxBodyBytes: number }) =>
  HttpApiBuilder.middleware((app) =>
    limitBody(options.maxBodyBytes)(app).pipe(Effect.catchAllCause(causeResponse))
  )
