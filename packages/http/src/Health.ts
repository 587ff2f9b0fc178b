/**
 * Probes for orchestrators and load balancers, outside the API:
 *
 * - `GET /healthz` (liveness): 200 while the process runs, starting and
 *   stopping included.
 * - `GET /readyz` (readiness): 200 while the server takes requests (its app
 *   is built, so storage is migrated and fixtures are loaded, and storage
 *   answers now); 503 while it starts or stops and while storage does not
 *   answer.
 *
 * `layer` routes both on the app. While no app is attached to the server
 * (between listening and the end of the app's start, and between the app's
 * stop and the server's close), the server itself answers with `refusal`
 * (`@hosting/http-node`'s NodeServer does).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Ports } from "@hosting/core"
import { Context, Duration, Effect, Layer } from "effect"
import * as ApiRoutes from "./ApiRoutes.js"
import { storageUnavailableResponse } from "./ErrorMapping.js"
import * as JsonAnswer from "./internal/jsonAnswer.js"

/** The liveness probe's path. */
export const livePath = "/healthz"

/** The readiness probe's path. */
export const readyPath = "/readyz"

/** Whether a request target (`/readyz?x=1`) is one of the probes, which no rate limit may refuse. */
export const isProbe = (target: string): boolean => {
  const path = ApiRoutes.pathOf(target)
  return path === livePath || path === readyPath
}

const noStore = { "cache-control": "no-store" }

export interface HealthOptions {
  /** How long storage may take to answer before the server counts as not ready (default 1 s, a probe's usual timeout). */
  readonly timeout?: Duration.DurationInput | undefined
}

/** Seconds a client is told to wait (`Retry-After`) when the server starts or stops. */
export const retryAfterSeconds = 1

/**
 * The body of a request refused while the server starts or stops: `/readyz`
 * while stopping, and every request a server answers while no app is
 * attached (`@hosting/http-node` takes it as its `unavailable` option).
 */
export const refusal = (phase: "starting" | "stopping") => ({
  error: phase,
  details: phase === "starting"
    ? "The server is starting and does not take requests yet; retry shortly."
    : "The server is stopping; retry, another process may take the request."
})

/** Whether the server is stopping: readiness says so from the first moment of a stop. */
export class Readiness extends Context.Tag("@hosting/http/Readiness")<Readiness, {
  readonly stopping: () => boolean
  readonly stop: () => void
}>() {}

const readiness = Layer.sync(Readiness, () => {
  let stopping = false
  return { stopping: () => stopping, stop: () => void (stopping = true) }
})

const routes = (options: HealthOptions) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const { stopping } = yield* Readiness
      const transactor = yield* Ports.Transactor
      const storageAnswers = Effect.suspend(() => transactor.withTransaction(Effect.void)).pipe(
        Effect.timeoutFail({ duration: options.timeout ?? Duration.seconds(1), onTimeout: () => "no answer in time" }),
        Effect.tapErrorCause((cause) => Effect.logDebug("not ready: storage does not answer", cause))
      )
      yield* router.get(livePath, Effect.sync(() => JsonAnswer.json({ status: "alive" }, { headers: noStore })))
      yield* router.get(
        readyPath,
        Effect.suspend(() =>
          stopping()
            ? Effect.succeed(JsonAnswer.json(refusal("stopping"), {
              status: 503,
              headers: { ...noStore, "retry-after": String(retryAfterSeconds) }
            }))
            : Effect.matchCause(storageAnswers, {
              onFailure: () => HttpServerResponse.setHeaders(storageUnavailableResponse(), noStore),
              onSuccess: () => JsonAnswer.json({ status: "ready" }, { headers: noStore })
            })
        )
      )
    })
  )

/**
 * Routes `/healthz` and `/readyz` on the app served with
 * `HttpApiBuilder.serve`, and gives their Readiness (for `stopFirst`).
 * Readiness asks storage for an empty transaction, which needs the database
 * to answer (a connection, `BEGIN`, `COMMIT`).
 */
export const layer = (options: HealthOptions = {}) => routes(options).pipe(Layer.provideMerge(readiness))

/**
 * Built after the app is served, so that its finalizer runs first at a stop:
 * `/readyz` answers 503 `stopping` at once, and the app keeps serving for
 * `delay` before it stops, while load balancers take the server out.
 */
export const stopFirst = (delay: Duration.DurationInput) =>
  Layer.scopedDiscard(Effect.flatMap(Readiness, (readiness) =>
    Effect.addFinalizer(() =>
      Effect.zipRight(
        Effect.sync(readiness.stop),
        Duration.toMillis(delay) > 0
          ? Effect.zipRight(
            Effect.logInfo(`stopping: /readyz answers 503; requests are served ${Duration.format(delay)} more`),
            Effect.sleep(delay)
          )
          : Effect.void
      )
    )))
