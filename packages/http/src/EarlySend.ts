/**
 * The send route (`POST /deployments/{id}/messaging/conversations/{id}/messages`)
 * answered on Node's request event, before the request reaches Effect's
 * router and middleware. The answer is the routed one: the same schemas
 * (the endpoint's own), the same use case call (`ChatHttp.sendAs`), the same
 * token check, rate limit and error bodies (`ErrorResponses.failureResponse`,
 * `RateLimit.charge`). What it saves is the router, the middleware chain and
 * the request's context changes: about a third of the runtime work of a
 * send (docs/performance.md).
 *
 * Only the plain case is taken: a bearer token in `Authorization`, a JSON
 * (or untyped) body of declared length within the route's limit, and a path
 * without percent escapes or a query. Any other request to the route (a
 * session cookie, a chunked or oversize body, a malformed header) goes on to
 * the router, which answers it as before.
 */
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ChatApi } from "@hosting/api"
import { Chat, type Conversation, type Deployment, Identity } from "@hosting/core"
import { Context, Effect, Either, FiberId, Layer, Option, ParseResult, Runtime, Schema } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as ApiRoutes from "./ApiRoutes.js"
import { bearerToken, headerCredential } from "./Auth.js"
import * as BodyLimits from "./BodyLimits.js"
import { sendAs } from "./ChatHttp.js"
import * as DotSegments from "./DotSegments.js"
import { handle } from "./ErrorMapping.js"
import { bodyDecodeResponse, failureResponse, parseJson, readBody } from "./ErrorResponses.js"
import * as RateLimit from "./RateLimit.js"

export interface Service {
  /**
   * Answers the request when it is a plain send (see the module) and
   * returns true; returns false, touching nothing, for any other request.
   */
  readonly answer: (request: IncomingMessage, response: ServerResponse) => boolean
}

/** The early send of one server. */
export class EarlySend extends Context.Tag("@hosting/http/EarlySend")<EarlySend, Service>() {}

// The endpoint's own path, schemas and body limit, so that this answer cannot drift from the route's.
const route = ApiRoutes.routeOf(ChatApi.ChatApi, "send")
const endpoint = route.endpoint
const pathSchema = Option.getOrThrow(endpoint.pathSchema) as Schema.Schema<
  { readonly deploymentId: Deployment.DeploymentId; readonly conversationId: Conversation.ConversationId },
  unknown
>
const payloadSchema = Option.getOrThrow(endpoint.payloadSchema) as Schema.Schema<typeof ChatApi.SendRequest.Type, unknown>
const successSchema = endpoint.successSchema as Schema.Schema<typeof ChatApi.SendResponse.Type, unknown>

/** The route's path, its parameters named; segments with escapes are left to the router, which decodes them. */
const routePath = ApiRoutes.pattern(route.path, { segment: "[^/%?#]+" })

const decodePath = Schema.decodeUnknown(pathSchema)
const decodePayload = Schema.decodeUnknown(payloadSchema)
const encodeSuccess = Schema.encode(successSchema)
const success = {
  status: HttpApiSchema.getStatusSuccess(successSchema),
  contentType: HttpApiSchema.getEncoding(successSchema.ast).contentType
}

/** Writes an answer as the platform's Node server does. */
const write = (response: ServerResponse, answer: HttpServerResponse.HttpServerResponse) => {
  if (response.writableEnded || response.destroyed) return
  response.writeHead(answer.status, answer.headers)
  response.end(answer.body._tag === "Uint8Array" ? answer.body.body : undefined)
}

/** Whether the platform reads this content type as JSON (it takes a missing one for JSON). */
const readsAsJson = (contentType: string | undefined) => (contentType ?? "application/json").includes("application/json")

export const make = (options: { readonly maxBodyBytes: number }): Effect.Effect<Service, never, Chat.Chat | Identity.Identity | RateLimit.RateLimiter> =>
  Effect.gen(function*() {
    const send = sendAs(yield* Chat.Chat)
    const identity = yield* Identity.Identity
    const limiter = yield* RateLimit.RateLimiter
    const run = Runtime.runFork(yield* Effect.runtime<never>())
    // The route's body limit (a streamed one would leave every request to the router).
    const limit = BodyLimits.ofRoute(route, options.maxBodyBytes)

    /** What the routed send does once its body is read, in the order it does it. */
    const answered = (token: string, params: Readonly<Record<string, string>>, body: Either.Either<string, unknown>) =>
      Effect.gen(function*() {
        const principal = yield* handle(identity.authenticate(token))
        const path = yield* decodePath(params)
        if (Either.isLeft(body)) return bodyDecodeResponse(body.left)
        const json = yield* Effect.either(parseJson(body.right))
        if (Either.isLeft(json)) return bodyDecodeResponse(json.left)
        const payload = yield* decodePayload(json.right)
        const sent = yield* send(principal, path, payload)
        return yield* Effect.orDie(HttpServerResponse.json(yield* encodeSuccess(sent), success))
      }).pipe(
        Effect.catchIf(ParseResult.isParseError, HttpApiError.HttpApiDecodeError.refailParseError),
        Effect.catchAllCause(failureResponse)
      )

    const answer = (request: IncomingMessage, response: ServerResponse): boolean => {
      if (request.method !== route.method) return false
      const url = request.url ?? ""
      const match = routePath.exec(url)
      if (match === null || DotSegments.hasDotSegment(url)) return false
      const headers = request.headers
      const authorization = headers["authorization"]
      const token = bearerToken(authorization)
      if (authorization === undefined || Option.isNone(token) || !readsAsJson(headers["content-type"]) || headers["transfer-encoding"] !== undefined) return false
      const declared = headers["content-length"] === undefined ? Number.NaN : Number(headers["content-length"])
      if (!(typeof limit === "number" && declared >= 0 && declared <= limit)) return false
      readBody(request, declared, (body) => {
        const program = answered(token.value, match.groups!, body)
        const charged = limiter.enabled
          ? RateLimit.charge(
            limiter,
            headerCredential(authorization),
            () => limiter.clientAddress(request.socket.remoteAddress, headers["x-forwarded-for"]),
            RateLimit.userOf(identity.authenticate(token.value)),
            program
          )
          : program
        const fiber = run(Effect.flatMap(charged, (answer) => Effect.sync(() => write(response, answer))))
        // A client that goes away interrupts its request, as on the routed path.
        response.once("close", () => {
          if (!response.writableFinished) fiber.unsafeInterruptAsFork(FiberId.none)
        })
      })
      return true
    }
    return { answer }
  })

/** The early send; needs the chat and identity use cases and the rate limiter the routes use. */
export const layer = (options: { readonly maxBodyBytes: number }) => Layer.effect(EarlySend, make(options))
