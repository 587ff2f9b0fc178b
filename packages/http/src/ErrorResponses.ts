/**
 * Makes every failure that escapes a handler an `{ error, details }` JSON
 * answer: schema decode errors, malformed JSON, oversize bodies, unknown
 * routes and defects. A defect is logged with its cause and answered with a
 * bare 500 that shows no internals.
 */
import {
  HttpApiBuilder,
  HttpApiError,
  HttpApiSchema,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { ApiErrors } from "@hosting/api"
import { SchemaIssues } from "@hosting/core"
import { Cause, Effect, Option, type Schema } from "effect"
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

const json = (status: number, error: string, details: string) =>
  HttpServerResponse.unsafeJson({ error, details }, { status })

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
    if (HttpServerError.isServerError(error)) {
      const request = yield* HttpServerRequest.HttpServerRequest
      switch (error._tag) {
        case "RouteNotFound":
          return json(404, "not_found", `No route for ${request.method} ${new URL(request.url, "http://x").pathname}.`)
        case "RequestError":
          if (error.reason === "Decode") {
            return isBodyTooLarge(error)
              ? json(413, "payload_too_large", "The request body is larger than this route accepts.")
              : json(400, "invalid_json", "The request body is not valid JSON.")
          }
      }
    }
    yield* Effect.logError("request failed", cause)
    return json(500, "internal_error", internalDetails)
  })

/** File uploads stream to the object store; their limit is the size reserved for the file. */
const fileUpload = /^\/api\/v1\/deployments\/[^/]+\/files\/[^/]+\/content$/

/** Refuses bodies whose declared length is over the limit before reading them, and caps the rest. */
const limitBody = (maxBodyBytes: number) => <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.method === "PUT" && fileUpload.test(new URL(request.url, "http://x").pathname)) return yield* app
    const declared = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      return json(413, "payload_too_large", `The request body is larger than ${maxBodyBytes} bytes.`)
    }
    return yield* HttpServerRequest.withMaxBodySize(app, Option.some(maxBodyBytes))
  })

/** The API-level middleware that applies the body limit and turns every failure into the error body. */
export const layer = (options: { readonly maxBodyBytes: number }) =>
  HttpApiBuilder.middleware((app) =>
    limitBody(options.maxBodyBytes)(app).pipe(Effect.catchAllCause(causeResponse))
  )
