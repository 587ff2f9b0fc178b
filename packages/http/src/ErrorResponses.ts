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
import * as UrlParams from "@effect/platform/UrlParams"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
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

/** What the platform's reading of a body fails with past its limit (`isBodyTooLarge` recognises it). */
const tooLarge = new Error("maxBytes exceeded")

/**
 * The body of a request as text, failing past `limit` bytes. Unlike the
 * platform's reading, which destroys the connection of a body past its
 * limit (a client still sending then loses the 413), the rest of such a
 * body flows on and is dropped, so the client can finish and read the answer.
 */
const readText = (request: HttpServerRequest.HttpServerRequest, limit: number) =>
  Effect.async<string, HttpServerError.RequestError>((resume) => {
    const source = NodeHttpServerRequest.toIncomingMessage(request)
    const chunks: Array<Buffer> = []
    let bytes = 0
    const stop = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const fail = (cause: unknown) => {
      stop()
      resume(Effect.fail(new HttpServerError.RequestError({ request, reason: "Decode", cause })))
    }
    function onData(chunk: Buffer) {
      bytes += chunk.length
      if (bytes <= limit) return void chunks.push(chunk)
      fail(tooLarge)
      // Without a reader the stream would stop; flowing, it drops what still comes.
      source.resume()
    }
    function onEnd() {
      stop()
      resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    }
    function onError(error: Error) {
      fail(error)
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    return Effect.sync(stop)
  })

/**
 * The request with its body read as text by `readText` (once, however often
 * it is asked for): `text`, `urlParamsBody`, and a `json` that refuses a body
 * nested deeper than `maxJsonDepth` before parsing it, so that nothing
 * downstream recurses into it. Other readings (multipart, the raw stream)
 * stay the platform's, under its limit.
 */
const withBodyLimits = (request: HttpServerRequest.HttpServerRequest, limit: number): HttpServerRequest.HttpServerRequest => {
  const decodeError = (cause: unknown) => new HttpServerError.RequestError({ request, reason: "Decode", cause })
  const text = Effect.runSync(Effect.cached(readText(request, limit)))
  const json = Effect.flatMap(text, (body) =>
    nestsDeeperThan(body, maxJsonDepth)
      ? Effect.fail(decodeError(tooDeep))
      : Effect.try({ try: (): unknown => (body === "" ? null : JSON.parse(body)), catch: decodeError }))
  const urlParamsBody = Effect.flatMap(text, (body) =>
    Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(body)), catch: decodeError }))
  const body: Record<PropertyKey, unknown> = { text, json, urlParamsBody }
  return new Proxy(request, {
    get: (target, key) => Object.hasOwn(body, key) ? body[key] : Reflect.get(target, key, target)
  })
}

/** Requests with a body get the reading of `withBodyLimits`; every reading keeps the platform's limit too. */
const limitRead = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>, limit: number) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const headers = request.headers
    const bodiless = request.method === "GET" || request.method === "HEAD" ||
      (headers["content-length"] === undefined && headers["transfer-encoding"] === undefined)
    const limited = HttpServerRequest.withMaxBodySize(app, Option.some(limit))
    return bodiless ? limited : Effect.provideService(limited, HttpServerRequest.HttpServerRequest, withBodyLimits(request, limit))
  })

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
    return yield* limitRead(app, limit)
  })

/** The API-level middleware that applies the body limit and turns every failure into the error body. */
export const layer = (options: { readonly maxBodyBytes: number }) =>
  HttpApiBuilder.middleware((app) =>
    limitBody(options.maxBodyBytes)(app).pipe(Effect.catchAllCause(causeResponse))
  )
