/**
 * How the dashboard calls the API: the typed client of `@hosting/client` on
 * the browser's `fetch`, authenticated by the session cookie (same origin, so
 * `fetch` sends it by itself) and, for every request that changes something,
 * the session's CSRF value in `X-CSRF-Token`.
 *
 * Pages get promises from `call`, which fail with `Problem` (the API's
 * `{ error, details }`, or a network failure in the same shape).
 */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { ClientError, HostingClient } from "@hosting/client"
import { Cause, Effect, Exit, Fiber, Layer, ManagedRuntime, Option, Stream } from "effect"

/** The API's base address: same origin as the page. */
export const baseUrl = `${window.location.origin}/api/v1`

let csrfToken: string | undefined

/** Sets (or clears) the CSRF value sent with every non-GET request. */
export const setCsrf = (value: string | undefined) => {
  csrfToken = value
}

/** The CSRF value of the current session, for requests made outside the client (uploads). */
export const csrf = () => csrfToken

/** Methods that need the CSRF header when the cookie authenticates them. */
export const changesState = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS"

const withCsrf = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (client) =>
    HttpClient.mapRequest(client, (request) =>
      csrfToken !== undefined && changesState(request.method)
        ? HttpClientRequest.setHeader(request, "x-csrf-token", csrfToken)
        : request))
).pipe(Layer.provide(FetchHttpClient.layer))

/** One runtime for the page's lifetime: every call and stream runs on it. */
export const runtime = ManagedRuntime.make(withCsrf)

/** A failed call, in the words of the API. */
export class Problem extends Error {
  constructor(readonly problem: ClientError.Problem) {
    super(problem.details)
    this.name = "Problem"
  }
  get status() {
    return this.problem.status
  }
  get code() {
    return this.problem.error
  }
}

/** Anything thrown, as a `Problem` (so that every error shows its `details`). */
export const asProblem = (error: unknown): Problem => {
  if (error instanceof Problem) return error
  const details = error instanceof Error ? error.message : String(error)
  return new Problem({ kind: "invalid", status: undefined, error: "unknown_error", details })
}

type Listener = (problem: Problem) => void
const unauthorizedListeners = new Set<Listener>()

/** Called when any call answers 401: the session ended or expired. */
export const onUnauthorized = (listener: Listener) => {
  unauthorizedListeners.add(listener)
  return () => {
    unauthorizedListeners.delete(listener)
  }
}

/** Reads any failure as a `Problem`, and tells the listeners about a 401. */
export const toProblem = (error: unknown): Effect.Effect<Problem> =>
  Effect.map(ClientError.describe(error), (described) => {
    const problem = new Problem(described)
    if (described.status === 401) for (const listener of unauthorizedListeners) listener(problem)
    return problem
  })

/** The typed client, as `@hosting/client` derives it from the API definition. */
export type Client = HostingClient.Client

/** True for the rejection of a call whose signal aborted it. */
export const isAbort = (error: unknown) => error instanceof DOMException && error.name === "AbortError"

/**
 * Runs an effect that needs the HttpClient (a call of `@hosting/client`).
 * The promise fails with `Problem`, or with an `AbortError` when the signal
 * aborted it (the request is interrupted then).
 */
export const run = async <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient>, signal?: AbortSignal): Promise<A> => {
  const exit = await runtime.runPromiseExit(
    Effect.catchAll(effect, (error) => Effect.flatMap(toProblem(error), Effect.fail)),
    signal ? { signal } : undefined
  )
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) throw failure.value
  if (Cause.isInterruptedOnly(exit.cause)) throw new DOMException("The call was stopped", "AbortError")
  throw asProblem(Cause.squash(exit.cause))
}

/** Runs one call of the typed client, as `run` does. */
export const call = <A, E>(
  use: (client: Client) => Effect.Effect<A, E, HttpClient.HttpClient>,
  signal?: AbortSignal
): Promise<A> => run(Effect.flatMap(HostingClient.make({ baseUrl }), use), signal)

/** What a subscription does with what its stream gives. */
export interface Handlers<A> {
  readonly onItem: (item: A) => void
  /** The stream failed for good (a refusal, or reconnecting kept failing). */
  readonly onError?: (problem: Problem) => void
  /** The stream ended by itself. */
  readonly onEnd?: () => void
}

/** Runs a stream of `@hosting/client` in the background; the answer stops it. */
export const subscribe = <A, E>(
  stream: Stream.Stream<A, E, HttpClient.HttpClient>,
  handlers: Handlers<A>
): (() => void) => {
  const fiber = runtime.runFork(
    stream.pipe(
      Stream.runForEach((item) => Effect.sync(() => handlers.onItem(item))),
      Effect.matchEffect({
        onFailure: (error) => Effect.flatMap(toProblem(error), (problem) => Effect.sync(() => handlers.onError?.(problem))),
        onSuccess: () => Effect.sync(() => handlers.onEnd?.())
      })
    )
  )
  return () => {
    runtime.runFork(Fiber.interrupt(fiber))
  }
}
