/**
 * The platform's `HttpServer` on `node:http`, made for one request path:
 * every request of every route goes through the same few steps, on a
 * runtime captured once when the app is served.
 *
 * - A request gets a `NodeRequest` (nothing parsed until asked), a scope,
 *   and one fiber that runs the app and writes its answer, uninterruptible
 *   but where the app says otherwise (as on the platform's servers). The
 *   fiber starts with its whole context, made in one copy: the runtime's
 *   services, the request, the scope, and what an app that carries a
 *   `PrepareContext` (`@hosting/http`'s compiled app) adds for the route,
 *   so that its router need not change the fiber's context. A server span
 *   per request, as the platform's servers make (a W3C `traceparent` or B3
 *   header continued, `HttpMiddleware.withTracerDisabledWhen` honoured), is
 *   made only when the runtime that serves has its tracer enabled; with it
 *   off, nothing of it is on the request's path (see docs/decisions.md). The
 *   pre-response handlers an app registers
 *   (`HttpApp.appendPreResponseHandler`: the platform's CORS middleware,
 *   `HttpApiBuilder.securitySetCookie`) are applied to its answer, as the
 *   platform's servers apply them.
 * - Answers are written straight into Node's response. One whose body is
 *   in hand is ended with the others of the same turn of the event loop,
 *   back to back (`internal/endBatch.ts`: bounded to 16 answers and 2 ms); a
 *   pushed body (server-sent events, `Respond.PushSource`) is fed by its
 *   source with no fiber while it is open, and its scope closes with the
 *   connection.
 * - Slow clients are bounded: the headers and the whole request must arrive
 *   within their timeouts; what Node's parser refuses (a malformed request,
 *   oversize headers, a request past its time) gets the `{ error, details }`
 *   body instead of Node's bare answer.
 * - While no app is attached (the port opens before the app has started,
 *   and the app stops before the port closes), requests are answered at
 *   once: `/healthz` 200, everything else 503 `starting` or `stopping` with
 *   `Retry-After`; never held.
 * - At a stop, the app is detached first: new requests get 503 `stopping`,
 *   pushed streams are ended by their sources (server-sent events end with
 *   a hint to reconnect), and the requests in flight get the grace period
 *   to finish before the app's services stop. Then the server stops
 *   listening, closes idle connections, and closes the rest once the grace
 *   is over, so that a stop never waits on a client.
 */
import * as Etag from "@effect/platform/Etag"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as HttpApp from "@effect/platform/HttpApp"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpPlatform from "@effect/platform-node/NodeHttpPlatform"
import { Cause, Context, Effect, Exit, FiberRef, FiberRefs, Layer, Runtime, RuntimeFlags, Scope } from "effect"
import * as Crypto from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
import * as EndBatch from "./internal/endBatch.js"
import { closeNow, type MakeScope, maker as scopeMaker } from "./internal/scopes.js"
import { withServerSpan } from "./internal/serverSpan.js"
import { RequestServices } from "./internal/requestServices.js"
import { NodeRequest } from "./NodeRequest.js"
import * as Respond from "./Respond.js"

/** Why a request is refused while no app is attached. */
export type Phase = "starting" | "stopping"

export interface NodeServerOptions {
  readonly port?: number | undefined
  /** The address to listen on (default: every interface, as Node does). */
  readonly host?: string | undefined
  /** Time for a request's headers to arrive, in ms (default 60,000). */
  readonly headersTimeoutMs?: number | undefined
  /** Time for a whole request, body included, to arrive, in ms; 0 for none (default 300,000). Answers are never limited. */
  readonly requestTimeoutMs?: number | undefined
  /** How long an idle kept-alive connection stays open, in ms (default 5,000). */
  readonly keepAliveTimeoutMs?: number | undefined
  /** How long requests in flight at a stop may take (the app's services wait for them) before their connections are cut, in ms (default 3,000). */
  readonly shutdownGraceMs?: number | undefined
  /** The body of a request refused while no app is attached (default: `{ error: phase, details }` with a sentence of this package). */
  readonly unavailable?: ((phase: Phase) => unknown) | undefined
  /** The liveness probe's path, answered 200 even while no app is attached (default `/healthz`). */
  readonly livePath?: string | undefined
}

/** The Node server behind the `HttpServer`, for what only Node can tell. */
export class NodeServer extends Context.Tag("@hosting/http-node/NodeServer")<NodeServer, {
  readonly server: Server
  /** Whether an app answers requests now (false while it starts and once it stops). */
  readonly serving: () => boolean
}>() {}

/** Seconds a refused client is told to wait (`Retry-After`) while the server starts or stops. */
export const retryAfterSeconds = 1

const defaultUnavailable = (phase: Phase) => ({
  error: phase,
  details: phase === "starting"
    ? "The server is starting and does not take requests yet; retry shortly."
    : "The server is stopping; retry, another process may take the request."
})

const pathOf = (target: string) => {
  const query = target.indexOf("?")
  return query === -1 ? target : target.slice(0, query)
}

/** The status, code and sentence for a request Node's parser refused. */
const clientErrorAnswer = (error: NodeJS.ErrnoException, headersTimeoutMs: number, requestTimeoutMs: number): [number, string, string] => {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [
        408,
        "request_timeout",
        `The request did not arrive in time: headers within ${headersTimeoutMs} ms` +
        (requestTimeoutMs === 0 ? "." : `, the whole request within ${requestTimeoutMs} ms.`)
      ]
    case "HPE_HEADER_OVERFLOW":
      return [431, "headers_too_large", "The request's headers are larger than this server accepts."]
    default:
      return [400, "invalid_request", "The request is not valid HTTP/1.1."]
  }
}

/** Writes a whole JSON answer and closes the connection after it. */
const closingJson = (out: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  out.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    connection: "close",
    ...headers
  })
  out.end(text)
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void

/**
 * What an app may carry under `prepareContextKey` (`@hosting/http`'s compiled
 * app does): a function that adds what the request's route needs to the
 * context made for the request's fiber, so that the app's router need not
 * change the fiber's context itself. `shared` is what `services` already
 * holds for every request of this server (the same map each time, never
 * changed), so that what the app derives from it can be kept.
 */
export type PrepareContext = (
  request: HttpServerRequest.HttpServerRequest,
  services: Map<string, unknown>,
  shared: ReadonlyMap<string, unknown>
) => void

/** The key of an app's `PrepareContext`, shared through the global symbol registry. */
export const prepareContextKey = Symbol.for("@hosting/http/PrepareContext")

const prepareOf = (app: unknown): PrepareContext | undefined => {
  const prepare = (app as Record<symbol, unknown>)[prepareContextKey]
  return typeof prepare === "function" ? prepare as PrepareContext : undefined
}

/** What an attached app holds open: requests whose answer is not delivered yet, and pushed streams. */
interface InFlight {
  requests: number
  readonly streams: Respond.OpenStreams
  /** Called when the last request in flight is done, while a stop waits for it. */
  drained: (() => void) | undefined
}

/** Waits until no request is in flight, or `ms` passed. */
const settle = (inFlight: InFlight, ms: number) =>
  Effect.async<void>((resume) => {
    if (inFlight.requests === 0) return resume(Effect.void)
    const timer = setTimeout(() => inFlight.drained?.(), ms)
    inFlight.drained = () => {
      clearTimeout(timer)
      inFlight.drained = undefined
      resume(Effect.void)
    }
  })

/**
 * Makes the handler of an app: one fiber per request, forked on the
 * captured runtime with a context of its own, made in one copy before the
 * fiber starts: the runtime's services, the request, a fresh scope, and
 * what the app's `PrepareContext` adds for the request's route (where Effect
 * is not one whose scopes `internal/scopes.ts` knows how to make outside a
 * fiber, the fiber's first steps make the scope and set that context).
 * As on the platform's servers, the fiber runs
 * uninterruptible and what the app makes interruptible (the router: every
 * route not marked otherwise) is. The scope closes once the answer is
 * delivered (for a pushed body, when the connection closes); a client that
 * leaves interrupts the fiber, and the scope closes then too.
 */
const makeHandler = <E, R>(
  app: HttpApp.Default<E, R>,
  runtime: Runtime.Runtime<R>,
  inFlight: InFlight,
  prepare: PrepareContext | undefined,
  makeScope: MakeScope | undefined
): Handler => {
  const finished = () => {
    if (--inFlight.requests === 0) inFlight.drained?.()
  }
  /**
   * The answer as the pre-response handlers the app registered on this
   * fiber make it (none registered: the answer itself, for the price of
   * reading one fiber ref).
   */
  const prepared = (request: NodeRequest, response: HttpServerResponse.HttpServerResponse) =>
    Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, HttpServerError.ResponseError>((fiber) => {
      const handler = fiber.getFiberRef(HttpApp.currentPreResponseHandlers)
      return handler._tag === "None" ? Effect.succeed(response) : handler.value(request, response)
    })
  /** The answer to a failure, without the handlers (they failed, or the failure is theirs); an interruption answers nothing. */
  const failed = (request: NodeRequest, scope: Scope.CloseableScope, cause: Cause.Cause<unknown>) =>
    Cause.isInterruptedOnly(cause)
      ? Scope.close(scope, Exit.void)
      : Effect.flatMap(HttpServerError.causeResponse(cause), ([response]) => deliver(request, scope, response))
  /** The answer to the app's failure, or to its handlers' (an interruption answers nothing). */
  const recover = (request: NodeRequest, scope: Scope.CloseableScope, cause: Cause.Cause<unknown>) =>
    Cause.isInterruptedOnly(cause)
      ? Scope.close(scope, Exit.void)
      : Effect.matchCauseEffect(
        Effect.flatMap(HttpServerError.causeResponse(cause), ([response]) => prepared(request, response)),
        {
          onSuccess: (response) => deliver(request, scope, response),
          onFailure: (again) => failed(request, scope, again)
        }
      )
  // As the platform's servers do: the handlers see the app's answer, or the answer to its failure. The handlers are
  // read from the request's fiber where the app has answered (the app registers them as it runs), with no step of
  // their own: the fiber is taken once, where the answer starts.
  const answer = (request: NodeRequest, scope: Scope.CloseableScope) =>
    Effect.withFiberRuntime<void, never, R | HttpServerRequest.HttpServerRequest>((fiber) =>
      Effect.matchCauseEffect(app, {
        onSuccess: (response) => {
          const handler = fiber.getFiberRef(HttpApp.currentPreResponseHandlers)
          if (handler._tag === "None") return deliver(request, scope, response)
          let handled: Effect.Effect<HttpServerResponse.HttpServerResponse, HttpServerError.ResponseError>
          try {
            handled = handler.value(request, response)
          } catch (defect) {
            // Thrown where its effect was due: a defect of the handlers, answered as their failures are.
            return recover(request, scope, Cause.die(defect))
          }
          return Effect.matchCauseEffect(handled, {
            onSuccess: (prepared) => deliver(request, scope, prepared),
            onFailure: (cause) => recover(request, scope, cause)
          })
        },
        onFailure: (cause) => recover(request, scope, cause)
      })
    )
  const deliver = (request: NodeRequest, scope: Scope.CloseableScope, response: HttpServerResponse.HttpServerResponse) => {
    const written = Respond.write(request.response, request.method, response, inFlight.streams)
    if (written === "streaming") {
      // Where its finalizers are plain `Effect.sync`s (a pushed stream's are), the scope closes at once, with no fiber.
      // Otherwise by a fiber with the request fiber's refs, its context among them: a finalizer added with
      // `Effect.addFinalizer` patches whatever differs between the fiber that added it and the one that runs it
      // (a context of another map: all of it, in and out again), which costs more than the stream did.
      return Effect.withFiberRuntime<void>((fiber) => {
        const out = request.response
        const context = fiber.currentContext
        const fiberRefs = fiber.getFiberRefs()
        const close = () => {
          if (closeNow(scope, Exit.void)) return
          Runtime.runFork(Runtime.make({ context, fiberRefs, runtimeFlags: runtime.runtimeFlags }), Scope.close(scope, Exit.void))
        }
        if (out.destroyed) close()
        else out.once("close", close)
        return Effect.void
      })
    }
    if (written === "done") return closeNow(scope, Exit.void) ? Effect.void : Scope.close(scope, Exit.void)
    // A body the fiber writes (a stream without a push source) stops when its client leaves.
    return Effect.ensuring(Effect.interruptible(written), Scope.close(scope, Exit.void))
  }
  const base = runtime.context.unsafeMap
  // Uninterruptible, as the platform's servers run an app (`HttpApp.toHandled`): the scope closes whatever happens.
  const flags = RuntimeFlags.disable(runtime.runtimeFlags, RuntimeFlags.Interruption)
  /**
   * The request's own context: the runtime's services (read through, not
   * copied: `RequestServices`), the request, its scope, and what the app
   * prepares for its route.
   */
  const contextOf = (request: NodeRequest, scope: Scope.CloseableScope) => {
    const services = new RequestServices(base).set(Scope.Scope.key, scope).set(HttpServerRequest.HttpServerRequest.key, request)
    try {
      prepare?.(request, services, base)
    } catch {
      // Nothing prepared: the app's router finds the route itself, and answers its failure.
    }
    return Context.unsafeMake(services)
  }
  const uninterruptible = Runtime.make({ context: runtime.context, fiberRefs: runtime.fiberRefs, runtimeFlags: flags })
  /** Where scopes are made only in a fiber: the scope in the fiber's first step, the context set in its second. */
  const inSteps = (request: NodeRequest) =>
    Effect.flatMap(Scope.make(), (scope) =>
      Effect.zipRight(FiberRef.set(FiberRef.currentContext, contextOf(request, scope)), answer(request, scope) as Effect.Effect<void>))
  const fork = (request: NodeRequest) => {
    if (makeScope === undefined) return Runtime.runFork(uninterruptible, inSteps(request))
    // The fiber starts with its whole context: given at the fork, it costs nothing; set by a step, a copy of the fiber's refs.
    const scope = makeScope()
    const context = contextOf(request, scope) as Context.Context<R>
    return Runtime.runFork(Runtime.make({ context, fiberRefs: runtime.fiberRefs, runtimeFlags: flags }), answer(request, scope) as Effect.Effect<void, never, R>)
  }
  return (incoming, out) => {
    const request = new NodeRequest(incoming, out)
    inFlight.requests++
    const fiber = fork(request)
    if (fiber.unsafePoll() !== null) return finished()
    // A client that leaves interrupts the request's fiber; once the fiber is done, nothing holds it (an open
    // stream outlives it, and would otherwise keep the whole fiber, its context included, for its connection's life).
    const interrupt = () => {
      if (!out.writableEnded) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
    }
    out.once("close", interrupt)
    fiber.addObserver(() => {
      out.off("close", interrupt)
      finished()
    })
  }
}

/**
 * Listens with Node's server and gives the `HttpServer` that serves apps
 * on it, and the `NodeServer`. The server closes with the scope.
 */
export const make = (options: NodeServerOptions = {}) =>
  Effect.gen(function*() {
    const headersTimeoutMs = options.headersTimeoutMs ?? 60_000
    const requestTimeoutMs = options.requestTimeoutMs ?? 300_000
    const unavailable = options.unavailable ?? defaultUnavailable
    const livePath = options.livePath ?? "/healthz"
    const graceMs = options.shutdownGraceMs ?? 3_000
    let handler: Handler | undefined
    let wasAttached = false
    /** When the grace of a stop ends (set once the app is detached). */
    let graceEnds: number | undefined
    const guard: Handler = (request, out) => {
      if (request.method === "GET" && pathOf(request.url ?? "") === livePath) {
        return closingJson(out, 200, { status: "alive" })
      }
      closingJson(out, 503, unavailable(wasAttached ? "stopping" : "starting"), { "retry-after": String(retryAfterSeconds) })
    }
    const server = createServer({
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      // How often Node looks for requests past their timeouts: a fraction of the shortest.
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(headersTimeoutMs / 4)))
    }, (request, out) => (handler ?? guard)(request, out))
    server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 5_000
    server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
      // An answer given before the request broke (a body cut short, then the client's end) is written first, as it
      // would have been at once had it not waited for the end of its turn.
      EndBatch.flush()
      const started = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true
      if (error.code === "ECONNRESET" || !socket.writable || started) return void socket.destroy()
      const [status, code, details] = clientErrorAnswer(error, headersTimeoutMs, requestTimeoutMs)
      const body = JSON.stringify({ error: code, details })
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
      )
    })
    yield* Effect.acquireRelease(
      Effect.async<void, HttpServerError.ServeError>((resume) => {
        const onError = (cause: Error) => resume(Effect.fail(new HttpServerError.ServeError({ cause })))
        server.once("error", onError)
        server.listen({ port: options.port ?? 0, host: options.host }, () => {
          server.off("error", onError)
          resume(Effect.void)
        })
      }),
      () =>
        Effect.async<void>((resume) => {
          // Answers waiting for the end of this turn go before any connection can close.
          EndBatch.flush()
          server.close(() => resume(Effect.void))
          server.closeIdleConnections()
          // What the grace leaves (a moment at least, for the last frames of ended streams to leave).
          const left = graceEnds === undefined ? graceMs : Math.max(250, graceEnds - Date.now())
          setTimeout(() => server.closeAllConnections(), left).unref()
        })
    )
    const address = server.address()
    const httpServer = HttpServer.make({
      address: typeof address === "string" || address === null
        ? { _tag: "UnixAddress", path: String(address) }
        : { _tag: "TcpAddress", hostname: address.address === "::" ? "0.0.0.0" : address.address, port: address.port },
      serve: (app, middleware) =>
        Effect.gen(function*() {
          const runtime = yield* Effect.runtime<never>()
          const withMiddleware = (middleware === undefined ? app : middleware(app)) as HttpApp.Default<unknown, never>
          // Decided once, for the life of the app: a request with tracing off pays nothing for it.
          const traced = FiberRefs.getOrDefault(runtime.fiberRefs, FiberRef.currentTracerEnabled)
          const served = traced ? withServerSpan(withMiddleware) : withMiddleware
          const inFlight: InFlight = { requests: 0, streams: new Respond.OpenStreams(), drained: undefined }
          handler = makeHandler(served, runtime, inFlight, prepareOf(app), yield* scopeMaker)
          wasAttached = true
          // Runs before the app's services stop (they were built before it was served).
          yield* Effect.addFinalizer(() =>
            Effect.suspend(() => {
              handler = undefined
              graceEnds = Date.now() + graceMs
              for (const stream of inFlight.streams.sources()) stream.stop?.()
              return settle(inFlight, graceMs)
            })
          )
        })
    })
    return { httpServer, node: NodeServer.of({ server, serving: () => handler !== undefined }) }
  })

/**
 * SHA-256 of a text's UTF-8 bytes in lowercase hex, by Node's crypto, given
 * under the key that `@hosting/core`'s `Identity.Sha256Hex` reads, so that
 * tokens and codes hashed in a request use it (this package does not
 * depend on the core: the key is the contract). `crypto.hash` (Node 20.12
 * and later) makes no `Hash` object; earlier, `createHash`.
 */
export const Sha256Hex = Context.GenericTag<"@hosting/Sha256Hex", (text: string) => string>("@hosting/Sha256Hex")

const oneShot = (Crypto as { hash?: (algorithm: string, data: string) => string }).hash
export const sha256Hex: (text: string) => string = oneShot !== undefined
  ? (text) => oneShot("sha256", text)
  : (text) => Crypto.createHash("sha256").update(text).digest("hex")

/** The services the platform's routers expect beside the server: files, paths, ETags, file answers. */
const platform = Layer.mergeAll(NodeHttpPlatform.layer, Etag.layerWeak).pipe(Layer.provideMerge(NodeContext.layer))

/** The server on `options.port` (default: a free one), with the platform services routes use and Node's `Sha256Hex`. */
export const layer = (options: NodeServerOptions = {}) =>
  Layer.scopedContext(Effect.map(make(options), ({ httpServer, node }) =>
    Context.make(HttpServer.HttpServer, httpServer).pipe(Context.add(NodeServer, node), Context.add(Sha256Hex, sha256Hex)))).pipe(
      Layer.provideMerge(platform)
    )

/** For tests: the server on a free port of 127.0.0.1, and an `HttpClient` whose relative URLs go to it. */
export const layerTest = HttpServer.layerTestClient.pipe(
  Layer.provide(FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.RequestInit, { keepalive: false })))),
  Layer.provideMerge(layer({ port: 0, host: "127.0.0.1" }))
)

/** The key under which a stream body carries its push source (`Respond.PushSource`). */
export const pushSourceKey = Respond.PushSource.key
