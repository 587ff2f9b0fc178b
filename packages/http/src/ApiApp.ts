/**
 * The API served as one compiled app: the routes of the served `HttpApi`
 * found by one router built once, and each endpoint's decoding, middleware
 * and encoding prepared once, when the app is built.
 *
 * `group` has the signature of `HttpApiBuilder.group` and builds the same
 * layer (so `HttpApiBuilder.serve` still serves it: the parity test keeps the
 * platform as the reference); it also records the group's handlers and the
 * context they were built in. `serve` is `HttpApiBuilder.serve` over those
 * records. What a request costs on it, against the platform's route:
 *
 * - one context for the whole route: the group's services, the request's,
 *   the route's parameters and query, and what the middleware provides, in
 *   one copy (the platform copies the context in the router, again for the
 *   group's services and again for each service a middleware provides). On
 *   a server that calls the app's `PrepareContext` (`@hosting/http-node`),
 *   that copy is the one the server makes for the request's fiber, and the
 *   router does not change the fiber's context at all;
 * - decoding and encoding run synchronously where the schema allows it, and
 *   the answer is made straight from the encoded value (the platform encodes
 *   through a schema transformation into the response);
 * - no generator and no lookups of the fiber for each request.
 *
 * Routes the platform's router holds that no `group` recorded (a group
 * built with `HttpApiBuilder.group`, routes added with
 * `HttpApiBuilder.Router.use`: the probes) are found by the same router and
 * run as the platform runs them, so a mixed app still answers everything.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpMethod from "@effect/platform/HttpMethod"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Respondable from "@effect/platform/HttpServerRespondable"
import { Steps } from "@hosting/core"
import { Cause, Chunk, Context, Effect, FiberRef, Layer, ParseResult, Schema, type Scope, Tracer } from "effect"
import * as FindMyWay from "find-my-way-ts"
import { answerOf, answersOf } from "./internal/apiCodecs.js"
import { inputDecoder } from "./internal/apiInput.js"
import { beforeOf, runBefore } from "./internal/apiMiddleware.js"
import { noteOwn } from "./internal/ownServices.js"
import * as ErrorResponses from "./ErrorResponses.js"
import * as RequestLog from "./RequestLog.js"

/** A group's handlers as `group` recorded them, with the context they were built in. */
interface Recorded {
  readonly group: HttpApiGroup.HttpApiGroup.AnyWithProps
  readonly items: ReadonlyArray<HttpApiBuilder.Handlers.Item<any, any>>
  readonly context: Context.Context<never>
}

/**
 * The groups recorded while the app's layers are built. Like the platform's
 * `HttpApiBuilder.Router`, one instance is shared by every layer of a build
 * because every user provides the same `Live` layer.
 */
export class Groups extends Context.Tag("@hosting/http/ApiApp/Groups")<Groups, {
  readonly add: (recorded: Recorded) => void
  readonly all: () => ReadonlyArray<Recorded>
}>() {
  static readonly Live = Layer.sync(Groups, () => {
    const recorded: Array<Recorded> = []
    return { add: (entry) => void recorded.push(entry), all: () => recorded }
  })
}

/**
 * `HttpApiBuilder.group`, recorded for `serve`: the same handlers, served by
 * `HttpApiBuilder.serve` as by `serve`.
 */
export const group: typeof HttpApiBuilder.group = ((api: any, groupName: any, build: any) =>
  (HttpApiBuilder.group as any)(api, groupName, (handlers: any) =>
    Effect.gen(function*() {
      const result = build(handlers)
      const built: HttpApiBuilder.Handlers<any, any, any> = Effect.isEffect(result) ? yield* result : result
      const context = yield* Effect.context<never>()
      const groups = yield* Groups
      groups.add({ group: built.group as any, items: Chunk.toReadonlyArray(built.handlers), context })
      return built
    }) as any).pipe(Layer.provide(Groups.Live))) as any

// ---------------------------------------------------------------------------
// Decoding and encoding, prepared once per schema

// ---------------------------------------------------------------------------
// Routes

/** What the router finds for a route: how to run it, and the services to add to its context. */
interface Compiled {
  readonly route: HttpRouter.Route<any, any>
  readonly context: Context.Context<never> | undefined
  /** The entries of `context` that a server's shared services lack, by those services (see `PrepareContext`). */
  readonly extras: WeakMap<ReadonlyMap<string, unknown>, ReadonlyArray<readonly [string, unknown]>>
  readonly run: (
    request: HttpServerRequest.HttpServerRequest,
    params: Readonly<Record<string, string | undefined>>,
    query: Readonly<Record<string, string | ReadonlyArray<string>>>,
    services: Map<string, unknown>
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, any>
}

const refailParseError = (error: unknown) =>
  ParseResult.isParseError(error) ? ErrorResponses.refailParseError(error) : Effect.fail(error)

/** A recorded endpoint, prepared: decoders, middleware, the encoder of its answers. */
const compile = (recorded: Recorded, item: HttpApiBuilder.Handlers.Item<any, any>): Compiled => {
  const endpoint = item.endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  const encode = answersOf(endpoint.successSchema, HttpApiSchema.getStatusSuccessAST)
  const before = beforeOf(recorded.group.middlewares, endpoint.middlewares, recorded.context)
  const handler = item.handler

  /** The handler's answer to its input: the response it made, or its value encoded. */
  const respond = (value: Record<string, unknown>) =>
    Effect.flatMap(handler(value as any), (result: unknown) =>
      HttpServerResponse.isServerResponse(result) ? Effect.succeed(result) : encode(result))

  const decodeInput = inputDecoder(endpoint, item.withFullRequest)
  // A parse failure of the input or of the answer (not of the middleware) becomes the answer the platform gives it.
  const answer = (
    request: HttpServerRequest.HttpServerRequest,
    params: Readonly<Record<string, string | undefined>>,
    query: Readonly<Record<string, string | ReadonlyArray<string>>>
  ) => Steps.catchFailure(decodeInput(request, params, query, respond), refailParseError)

  const route = HttpRouter.makeRoute(endpoint.method, endpoint.path as HttpRouter.PathInput, Effect.die("served by ApiApp"), {
    uninterruptible: item.uninterruptible
  })
  const guarded = (effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, any>) =>
    item.uninterruptible ? effect : Effect.interruptible(effect)
  return {
    route,
    context: recorded.context,
    extras: new WeakMap(),
    run: before.length === 0
      ? (request, params, query) => guarded(answer(request, params, query))
      : (request, params, query, services) =>
        // Decoded and handled once the middleware let the request through, as the platform does.
        guarded(runBefore(before, services, () => answer(request, params, query)))
  }
}

/** A route of the platform's router that no recorded group serves: run as the platform's router runs it. */
const platformRoute = (route: HttpRouter.Route<any, any>): Compiled => ({
  route,
  context: undefined,
  extras: new WeakMap(),
  run: () => {
    const response = Effect.flatMap(route.handler, Respondable.toResponse)
    return route.uninterruptible ? response : Effect.interruptible(response)
  }
})

const routeContext = (route: HttpRouter.Route<any, any>, params: Readonly<Record<string, string | undefined>>): HttpRouter.RouteContext => ({
  [HttpRouter.RouteContextTypeId]: HttpRouter.RouteContextTypeId,
  params,
  route
})

/**
 * The key under which the served app carries its `PrepareContext`, shared
 * through the global symbol registry (as a pushed body's source is), so
 * that a server need not import this package.
 */
export const prepareContextKey: unique symbol = Symbol.for("@hosting/http/PrepareContext") as never

/**
 * Adds what the route of a request needs to the context a server is making
 * for it, before its fiber starts: the route's group services (under the
 * request's), parameters and query. The router then runs the route in that
 * context as it is, instead of copying it and setting it on the fiber and
 * back (two context changes of the fiber, each a copy of its fiber refs).
 * `shared` is what `services` holds for every request of the server (the
 * same map each time, never changed): the group services it lacks are
 * found once per route, not for each request. `@hosting/http-node` calls
 * it; any other server need not.
 */
export type PrepareContext = (
  request: HttpServerRequest.HttpServerRequest,
  services: Map<string, unknown>,
  shared: ReadonlyMap<string, unknown>
) => void

/** The route found for a request, and the services it was prepared in (see `PrepareContext`). */
interface Prepared {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly match: FindMyWay.FindResult<Compiled> | undefined
  readonly services: Map<string, unknown>
}

/** The entries of a route's group services that `shared` lacks, found once per route and shared services. */
const extrasOf = (compiled: Compiled, context: Context.Context<never>, shared: ReadonlyMap<string, unknown>) => {
  let extras = compiled.extras.get(shared)
  if (extras === undefined) {
    extras = Array.from(context.unsafeMap).filter(([key]) => !shared.has(key))
    compiled.extras.set(shared, extras)
  }
  return extras
}

/**
 * The group's services under the request's (the request's win, as in the
 * platform's merge), then the route's own. With `shared` (see
 * `PrepareContext`), only the group services it lacks are looked at.
 */
const addRoute = (
  services: Map<string, unknown>,
  match: FindMyWay.FindResult<Compiled>,
  shared?: ReadonlyMap<string, unknown>
): Map<string, unknown> => {
  const compiled = match.handler
  if (compiled.context !== undefined) {
    const entries = shared === undefined ? compiled.context.unsafeMap : extrasOf(compiled, compiled.context, shared)
    for (const [key, value] of entries) if (!services.has(key)) services.set(key, value)
  }
  return services
    .set(HttpServerRequest.ParsedSearchParams.key, match.searchParams)
    .set(HttpRouter.RouteContext.key, routeContext(compiled.route, match.params))
}

/**
 * The router over every recorded endpoint and every other route of the
 * platform's router, as an app: one lookup, one context, the route's run;
 * and the `PrepareContext` that moves the lookup and the context before the
 * request's fiber.
 */
const router = Effect.gen(function*() {
  const config = yield* FiberRef.get(HttpRouter.currentRouterConfig)
  const found = FindMyWay.make<Compiled>(config)
  const served = new Set<string>()
  for (const recorded of (yield* Groups).all()) {
    for (const item of recorded.items) {
      const compiled = compile(recorded, item)
      found.on(compiled.route.method as HttpMethod.HttpMethod, compiled.route.path, compiled)
      served.add(`${compiled.route.method} ${compiled.route.path}`)
    }
  }
  for (const route of (yield* HttpApiBuilder.Router.router).routes) {
    if (served.has(`${route.method} ${route.path}`)) continue
    if (route.method === "*") found.all(route.path, platformRoute(route))
    else found.on(route.method, route.path, platformRoute(route))
  }
  const lookup = (request: HttpServerRequest.HttpServerRequest) =>
    found.find(request.method, request.url) ?? (request.method === "HEAD" ? found.find("GET", request.url) : undefined)
  // Per router: a request prepared by another app's router is not this one's.
  const preparedKey = Symbol("@hosting/http/ApiApp/prepared")
  const prepare: PrepareContext = (request, services, shared) => {
    const match = lookup(request)
    if (match !== undefined) addRoute(services, match, shared)
    ;(request as unknown as Record<symbol, Prepared>)[preparedKey] = { request, match, services }
    noteOwn(request, services)
  }
  const routed = Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>((fiber) => {
    const input = fiber.getFiberRef(FiberRef.currentContext)
    const request = Context.unsafeGet(input, HttpServerRequest.HttpServerRequest)
    // Only for the request prepared: a middleware may have put another in its place (a proxy of it reads the same
    // key). One that stands for it in the context prepared for it, with its method and URL, has its route.
    const mark = (request as unknown as Record<symbol, Prepared | undefined>)[preparedKey]
    const prepared = mark !== undefined && (mark.request === request ||
        (mark.services === input.unsafeMap && mark.request.method === request.method && mark.request.url === request.url))
      ? mark
      : undefined
    const match = prepared === undefined ? lookup(request) : prepared.match
    if (match === undefined) return Effect.fail(new HttpServerError.RouteNotFound({ request }))
    const compiled = match.handler
    const span = input.unsafeMap.get(Tracer.ParentSpan.key) as Tracer.AnySpan | undefined
    if (span !== undefined && span._tag === "Span") span.attribute("http.route", compiled.route.path)
    RequestLog.noteRoute(request, compiled.route.path)
    // Prepared, and no middleware has changed the context since: the route runs in it as it is.
    if (prepared?.services === input.unsafeMap) return compiled.run(request, match.params, match.searchParams, prepared.services)
    const services = addRoute(new Map(input.unsafeMap), match)
    // The route's context for its run, the request's again after it, each set in one step (`Effect.locally` takes a
    // dozen: acquire, use, release). An interruptible fiber that is interrupted skips the way back: it is ending.
    const restore = FiberRef.set(FiberRef.currentContext, input)
    return Effect.zipRight(
      FiberRef.set(FiberRef.currentContext, Context.unsafeMake(services)),
      Effect.matchCauseEffect(compiled.run(request, match.params, match.searchParams, services), {
        onSuccess: (response) => Effect.as(restore, response),
        onFailure: (cause) => Effect.zipRight(restore, Effect.failCause(cause))
      })
    )
  })
  return { routed, prepare }
})

/** The served API's errors as answers, for a failure no middleware answered (as the platform encodes them). */
const errorAnswers = (api: HttpApi.HttpApi.AnyWithProps) => {
  const members = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(members, api.errorSchema)
  for (const group of Object.values(api.groups)) {
    for (const endpoint of Object.values(group.endpoints)) HttpApiSchema.deunionize(members, endpoint.errorSchema)
    HttpApiSchema.deunionize(members, group.errorSchema)
  }
  return Array.from(members, (member) => answerOf(member, HttpApiSchema.getStatusErrorAST))
}

/**
 * The app of the served API: the compiled router, the API's own middleware,
 * the app-wide middleware (`HttpApiBuilder.middleware`), and the errors of
 * the definition encoded as answers, in the platform's order.
 */
export const httpApp: Effect.Effect<
  HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>,
  never,
  Groups | HttpApiBuilder.Router | HttpApi.Api | HttpApiBuilder.Middleware
> = Effect.gen(function*() {
  const { api, context } = yield* HttpApi.Api
  const { prepare, routed } = yield* router
  const apiMiddleware = api.middlewares.size === 0
    ? routed
    : // The API's own middleware, with no errors of its own to encode: they pass through to the app-wide middleware.
      (yield* Effect.provide(
        HttpApiBuilder.buildMiddleware(Object.assign(Object.create(Object.getPrototypeOf(api)), api, {
          groups: {},
          errorSchema: Schema.Never
        })),
        context
      ))(routed as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>)
  const appMiddleware = yield* (yield* HttpApiBuilder.Middleware).retrieve
  const answers = errorAnswers(api as unknown as HttpApi.HttpApi.AnyWithProps)
  // Outermost: every request gets its id and (when on) its access line, whatever answered it.
  const logged = RequestLog.wrap(yield* RequestLog.RequestLogConfig)
  const app = appMiddleware(apiMiddleware as HttpApp.Default<unknown, never>).pipe(
    Effect.catchAllCause((cause) => {
      const failure = Cause.squash(cause)
      const answer = answers.find((candidate) => candidate.is(failure))
      return answer === undefined
        ? Effect.failCause(cause)
        : Effect.catchAll(answer.encode(failure), () => Effect.failCause(cause))
    }),
    logged
  ) as HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>
  return Object.assign(app, { [prepareContextKey]: prepare })
})

/**
 * Serves the API with the `HttpServer` in context, as `HttpApiBuilder.serve`
 * does, through the compiled app.
 */
export const serve = <R = never>(
  middleware?: (app: HttpApp.Default) => HttpApp.Default<never, R>
): Layer.Layer<
  never,
  never,
  | HttpServer.HttpServer
  | HttpRouter.HttpRouter.DefaultServices
  | Exclude<R, Scope.Scope | HttpServerRequest.HttpServerRequest>
  | HttpApi.Api
> =>
  httpApp.pipe(
    Effect.map((app) => HttpServer.serve(app as HttpApp.Default<never, never>, middleware!)),
    Layer.unwrapEffect,
    Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, Groups.Live])
  ) as any
