/**
 * How the compiled app (`ApiApp.ts`) decodes an endpoint's input (path,
 * payload, headers, query) from a request, as the platform's router does.
 *
 * The platform decodes each part in a step of its own, in that order. Here
 * the parts whose schemas decode synchronously are decoded in place, with
 * no step of the fiber, and only a body is read in a step: a GET with a
 * path and a query costs no step at all where it cost a dozen. Where a part
 * is refused (or its schema needs effects), every part is decoded again in
 * the platform's order and way, so that the request gets the failure the
 * platform's router gives it. Path, headers and query are looked at before
 * the body is read: when they decode, only the payload can fail, and it
 * would have failed first on the platform too.
 */
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpMethod from "@effect/platform/HttpMethod"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Multipart from "@effect/platform/Multipart"
import { Effect, Option, type ParseResult } from "effect"
import { bodyOf, decoderOf, refused, urlParamsFor } from "./apiCodecs.js"

type Params = Readonly<Record<string, string | undefined>>
type Query = Readonly<Record<string, string | ReadonlyArray<string>>>

/** Decodes a request's input into the value a handler takes, then goes on with `then`. */
export type InputDecoder = <A, E, R>(
  request: HttpServerRequest.HttpServerRequest,
  params: Params,
  query: Query,
  then: (value: Record<string, unknown>) => Effect.Effect<A, E, R>
) => Effect.Effect<A, E | ParseResult.ParseError, any>

/**
 * The input decoder of an endpoint. `withFullRequest` (the handler reads
 * the request itself) leaves the payload out, as the platform does.
 */
export const inputDecoder = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps, withFullRequest: boolean): InputDecoder => {
  const payloadAst = Option.map(endpoint.payloadSchema, (schema) => schema.ast)
  const multipartStream = Option.exists(payloadAst, (ast) => HttpApiSchema.getMultipartStream(ast) !== undefined)
  const limits = Option.flatMapNullable(payloadAst, (ast) => HttpApiSchema.getMultipart(ast) ?? HttpApiSchema.getMultipartStream(ast))
  const decodePath = Option.getOrUndefined(Option.map(endpoint.pathSchema, decoderOf))
  const decodePayload = withFullRequest || multipartStream
    ? undefined
    : Option.getOrUndefined(Option.map(endpoint.payloadSchema, decoderOf))
  const decodeHeaders = Option.getOrUndefined(Option.map(endpoint.headersSchema, decoderOf))
  const urlParams = Option.getOrUndefined(Option.map(endpoint.urlParamsSchema, (schema) => ({
    decode: decoderOf(schema),
    normalise: urlParamsFor(schema.ast)
  })))
  const multipartOf = (request: HttpServerRequest.HttpServerRequest) =>
    limits._tag === "Some" ? Multipart.withLimitsStream(request.multipartStream, limits.value) : request.multipartStream

  /** The input as the platform decodes it: each part in a step, in its order. */
  const inOrder = (
    value: Record<string, unknown>,
    request: HttpServerRequest.HttpServerRequest,
    params: Params,
    query: Query
  ): Effect.Effect<Record<string, unknown>, ParseResult.ParseError, any> => {
    let steps: Effect.Effect<Record<string, unknown>, ParseResult.ParseError, any> = Effect.succeed(value)
    if (decodePath !== undefined) steps = Effect.map(decodePath(params), (path) => (value["path"] = path, value))
    if (decodePayload !== undefined) {
      const decode = decodePayload
      steps = Effect.flatMap(steps, () =>
        Effect.map(Effect.flatMap(bodyOf(request, query, limits), decode), (payload) => (value["payload"] = payload, value)))
    } else if (multipartStream) value["payload"] = multipartOf(request)
    if (decodeHeaders !== undefined) {
      const decode = decodeHeaders
      steps = Effect.flatMap(steps, () => Effect.map(decode(request.headers), (headers) => (value["headers"] = headers, value)))
    }
    if (urlParams !== undefined) {
      steps = Effect.flatMap(steps, () =>
        Effect.map(urlParams.decode(urlParams.normalise(query)), (decoded) => (value["urlParams"] = decoded, value)))
    }
    return steps
  }

  return (request, params, query, then) => {
    const value: Record<string, unknown> = { request }
    const again = () => Effect.flatMap(inOrder(value, request, params, query), then)
    if (decodePath !== undefined && (value["path"] = decodePath.now(params)) === refused) return again()
    const body = decodePayload !== undefined && HttpMethod.hasBody(request.method)
    if (body) value["payload"] = undefined
    else if (decodePayload !== undefined && (value["payload"] = decodePayload.now(query)) === refused) return again()
    else if (multipartStream) value["payload"] = multipartOf(request)
    if (decodeHeaders !== undefined && (value["headers"] = decodeHeaders.now(request.headers)) === refused) return again()
    if (urlParams !== undefined && (value["urlParams"] = urlParams.decode.now(urlParams.normalise(query))) === refused) {
      return again()
    }
    if (!body) return then(value)
    const decode = decodePayload!
    return Effect.flatMap(bodyOf(request, query, limits), (read) => {
      const payload = decode.now(read)
      if (payload === refused) return Effect.flatMap(decode(read), (decoded) => (value["payload"] = decoded, then(value)))
      value["payload"] = payload
      return then(value)
    })
  }
}
