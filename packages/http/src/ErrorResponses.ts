/**
 * Makes every failure that escapes a handler an `{ error, details }` JSON
 * answer (a protobuf `google.rpc.Status` to an OTLP protobuf export,
 * OtlpErrors.ts): schema decode errors, malformed JSON, oversize bodies, unknown
 * routes and defects. A defect is logged with its cause and answered with a
 * bare 500 that shows no internals.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Multipart from "@effect/platform/Multipart"
import { ApiErrors } from "@hosting/api"
import { SchemaIssues } from "@hosting/core"
import { Cause, Context, Effect, Option, ParseResult, type Schema } from "effect"
import * as ApiRoutes from "./ApiRoutes.js"
import * as BodyLimits from "./BodyLimits.js"
import * as DotSegments from "./DotSegments.js"
import { internalDetails } from "./ErrorMapping.js"
import * as OtlpErrors from "./OtlpErrors.js"
import { ownServices } from "./internal/ownServices.js"
import * as JsonAnswer from "./internal/jsonAnswer.js"

const isApiError = (u: unknown): u is ApiErrors.ApiError => ApiErrors.classes.some((cls) => u instanceof cls)

/** The JSON answer of an API error, with the status its class is annotated with. */
export const apiErrorResponse = (error: ApiErrors.ApiError): HttpServerResponse.HttpServerResponse => {
  const status = HttpApiSchema.getStatusErrorAST((error.constructor as unknown as Schema.Schema.Any).ast)
  const body: Record<string, string> = { error: error.error, details: error.details }
  if (error instanceof ApiErrors.Conflict) body["code"] = error.code
  if (error instanceof ApiErrors.OAuthError) body["error_description"] = error.error_description
  return JsonAnswer.json(body, { status })
}

/** An `{ error, details }` answer with the given status (and headers). */
export const json = (status: number, error: string, details: string, headers?: Record<string, string>) =>
  JsonAnswer.json({ error, details }, headers === undefined ? { status } : { status, headers })

/** One line per problem, each naming where it is: `version: must be a semantic version ...`. */
export const decodeDetails = (error: HttpApiError.HttpApiDecodeError): string =>
  error.issues.length === 0 ? "The request is not valid." : `Invalid request: ${SchemaIssues.formatIssues(error.issues)}`

/**
 * Fails with the platform's `HttpApiDecodeError` for a request that did not
 * decode, as its `refailParseError` does, without checking the formatters'
 * issues against the error's own schema: that check compiles a parser on
 * each construction (about 70 µs of a bad request's CPU), and the issues are
 * the formatter's, of the shape the schema wants.
 */
export const refailParseError = (error: ParseResult.ParseError): Effect.Effect<never, HttpApiError.HttpApiDecodeError> =>
  Effect.flatMap(
    Effect.zip(ParseResult.ArrayFormatter.formatError(error), ParseResult.TreeFormatter.formatError(error)),
    ([issues, message]) => Effect.fail(new HttpApiError.HttpApiDecodeError({ issues, message }, { disableValidation: true }))
  )

const hasMessage = (cause: unknown, error: Error) => cause instanceof Error && cause.message === error.message

const payloadTooLarge = () => json(413, "payload_too_large", "The request body is larger than this route accepts.")

/**
 * The answer to a body that could not be read as JSON, by the cause of the
 * failed reading. Causes are told apart by their messages: the platform's
 * own past its limit has only that to go by.
 */
export const bodyDecodeResponse = (cause: unknown): HttpServerResponse.HttpServerResponse =>
  hasMessage(cause, tooLarge)
    ? payloadTooLarge()
    : hasMessage(cause, tooDeep)
    ? json(400, "invalid_json", `The request body nests arrays or objects more than ${maxJsonDepth} levels deep.`)
    : json(400, "invalid_json", "The request body is not valid JSON.")

/**
 * The answer for a failure or defect; `routeNotFound` answers the one
 * failure that depends on the request (without it, that failure is a
 * defect like any other). Interruptions stay interruptions.
 */
const answerOf = <E, R = never>(
  cause: Cause.Cause<E>,
  routeNotFound?: Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  // Without a generator, which would be a new generator function for every failed request (docs/decisions.md,
  // "Generator functions made once").
  Effect.suspend((): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    const error = Cause.squash(cause)
    if (HttpServerResponse.isServerResponse(error)) return Effect.succeed(error)
    if (isApiError(error)) return Effect.succeed(apiErrorResponse(error))
    if (error instanceof HttpApiError.HttpApiDecodeError) {
      return Effect.succeed(json(400, "invalid_request", decodeDetails(error)))
    }
    // No route takes multipart bodies, but the platform parses one sent to a JSON route.
    if (error instanceof Multipart.MultipartError) {
      return Effect.succeed(
        error.reason === "Parse"
          ? json(400, "invalid_request", "The request body is not valid multipart/form-data.")
          : error.reason === "InternalError"
          ? json(500, "internal_error", internalDetails)
          : payloadTooLarge()
      )
    }
    if (HttpServerError.isServerError(error)) {
      if (error._tag === "RouteNotFound" && routeNotFound !== undefined) return routeNotFound
      if (error._tag === "RequestError" && error.reason === "Decode") return Effect.succeed(bodyDecodeResponse(error.cause))
    }
    return Effect.zipRight(Effect.logError("request failed", cause), Effect.sync(() => json(500, "internal_error", internalDetails)))
  })

/** The answer for any failure or defect of a request; interruptions stay interruptions. */
export const causeResponse = <E>(
  cause: Cause.Cause<E>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest> =>
  answerOf(
    cause,
    Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
      json(404, "not_found", `No route for ${request.method} ${new URL(request.url, "http://x").pathname}.`))
  )

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

/** `parseJson` in plain code: the value, or `failed` of why not (no step of its own where it is already in one). */
const parsedJson = <E>(body: string, failed: (cause: unknown) => Effect.Effect<never, E>): Effect.Effect<unknown, E> => {
  if (nestsDeeperThan(body, maxJsonDepth)) return failed(tooDeep)
  try {
    return Effect.succeed(body === "" ? null : JSON.parse(body))
  } catch (cause) {
    return failed(cause)
  }
}

/**
 * A request body parsed as JSON (an empty body is `null`), refused before
 * parsing when it nests deeper than `maxJsonDepth`; the failure is the cause
 * `bodyDecodeResponse` answers.
 */
export const parseJson = (body: string): Effect.Effect<unknown, unknown> => parsedJson(body, Effect.fail)

/** What a body read past its limit fails with, on the platform's servers and on `@hosting/http-node` alike (`bodyDecodeResponse` recognises it by its message). */
const tooLarge = new Error("maxBytes exceeded")

/**
 * The request with a `json` that refuses a body nested deeper than
 * `maxJsonDepth` before parsing it, so that nothing downstream recurses
 * into it. The body itself is read by the server, under the limit in
 * context.
 */
const withJsonDepth = (request: HttpServerRequest.HttpServerRequest): HttpServerRequest.HttpServerRequest => {
  const decodeError = (cause: unknown) => Effect.fail(new HttpServerError.RequestError({ request, reason: "Decode", cause }))
  const json = Effect.flatMap(request.text, (body) => parsedJson(body, decodeError))
  return new Proxy(request, {
    get: (target, key) => key === "json" ? json : Reflect.get(target, key, target)
  })
}

/**
 * A request with a body reads it under the limit, with the `json` of
 * `withJsonDepth`. A request without one (a GET or HEAD, or neither a length
 * nor a chunked body declared: HTTP/1.1 then has none) is left as it is.
 * Both are set in the services made for the request alone where the
 * context is still those (`ownServices`), else provided.
 */
const limitRead = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  context: Context.Context<never>,
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  limit: number
) => {
  const headers = request.headers
  const bodiless = request.method === "GET" || request.method === "HEAD" ||
    (headers["content-length"] === undefined && headers["transfer-encoding"] === undefined)
  if (bodiless) return app
  const own = ownServices(request, context)
  if (own === undefined) {
    const limited = HttpServerRequest.withMaxBodySize(app, Option.some(limit))
    return Effect.provideService(limited, HttpServerRequest.HttpServerRequest, withJsonDepth(request))
  }
  own.set(HttpIncomingMessage.MaxBodySize.key, Option.some(limit)).set(HttpServerRequest.HttpServerRequest.key, withJsonDepth(request))
  return app
}

/**
 * Refuses a path with `.` or `..` segments (DotSegments) before it is
 * routed or served a page. Then refuses bodies whose declared length is
 * over the route's limit (BodyLimits, among the routes served) before
 * reading them, and caps the rest. A streamed route (a file upload, limited
 * by the size reserved for the file) reads its own body. Both look at the
 * request in one step.
 */
const guardRequest = (maxBodyBytes: number, routes: ReadonlyArray<ApiRoutes.Route>) =>
<E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, E, R>((fiber) => {
    const context = fiber.currentContext
    const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
    if (DotSegments.hasDotSegment(request.url)) return Effect.succeed(json(400, "invalid_request", DotSegments.details))
    // Neither a length nor a chunked body declared: HTTP/1.1 then has none, and no limit is looked up.
    if (request.headers["content-length"] === undefined && request.headers["transfer-encoding"] === undefined) return app
    const limit = BodyLimits.limitFor(request.method, ApiRoutes.pathOf(request.url), maxBodyBytes, routes)
    if (limit === "streamed") return app
    const declared = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > limit) {
      return Effect.succeed(json(413, "payload_too_large", `The request body is larger than the ${limit} bytes this route accepts.`))
    }
    return limitRead(request, context, app, limit)
  })

/**
 * The middleware in front of every route and page: refuses dot segments,
 * applies the body limits of the served API's routes and turns every
 * failure into the error body.
 */
export const layer = (options: { readonly maxBodyBytes: number }) =>
  HttpApiBuilder.middleware(Effect.map(HttpApi.Api, ({ api }) => {
    const guarded = guardRequest(options.maxBodyBytes, ApiRoutes.routesOf(api))
    // An error answer to an OTLP protobuf export goes in protobuf (OtlpErrors): the app's answer, or its failure's.
    return (app) =>
      Effect.matchCauseEffect(guarded(app), {
        onFailure: (cause) => Effect.flatMap(causeResponse(cause), OtlpErrors.inEncoding),
        onSuccess: OtlpErrors.inEncoding
      })
  }))
