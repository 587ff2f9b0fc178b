/**
 * The API served on a test server (loopback, random port) over in-memory
 * storage, plus small helpers to call it raw or through HttpApiClient.
 */
import { HttpApiBuilder, HttpApiClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { HostingApi } from "@hosting/api"
import { ApiApp, HostingHttp } from "@hosting/http"
import { NodeServer } from "@hosting/http-node"
import { TestServices } from "@hosting/testing"
import { Effect, Layer, Supervisor } from "effect"
import { expect } from "vitest"

/** Tracks every fiber the test server forks, so tests can see that none is left behind. */
export const fibers = Effect.runSync(Supervisor.track)

/**
 * Which server serves the API: `@hosting/http-node`'s with the compiled app
 * (`ApiApp.serve`), unless a test names another server (the platform's, as a
 * reference), which then serves it with `HttpApiBuilder.serve`.
 */
export interface ServerOption {
  readonly server?: typeof NodeServer.layerTest | undefined
}

export const layer = (options: HostingHttp.HostingHttpOptions & TestServices.TestServicesOptions & ServerOption = {}) =>
  (options.server === undefined || options.server === NodeServer.layerTest ? ApiApp.serve() : HttpApiBuilder.serve()).pipe(
    // Served as the example server serves without an OTLP endpoint: no tracer, so that a request's route runs in the
    // context `@hosting/http-node` prepared for it (a server span is a change of the context before the router).
    Layer.provide(Layer.setTracerEnabled(false)),
    Layer.provideMerge(HostingHttp.layer(options)),
    Layer.provideMerge(TestServices.make(options)),
    Layer.provideMerge(options.server ?? NodeServer.layerTest),
    Layer.provide(Supervisor.addSupervisor(fibers))
  )

/** A typed client, optionally sending a bearer token. */
export const client = (token?: string) =>
  HttpApiClient.make(HostingApi.HostingApi, {
    transformClient: token === undefined ? undefined : HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
  })

/** A raw call: status, headers and parsed JSON body (or text when not JSON). */
export const raw = (
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  options: {
    readonly token?: string
    readonly json?: unknown
    readonly text?: string
    /** A binary body (sent as application/octet-stream unless `headers` say otherwise). */
    readonly bytes?: Uint8Array
    readonly form?: Record<string, string>
    readonly headers?: Record<string, string>
    /** A path outside /api/v1 (the root metadata). */
    readonly root?: boolean
  } = {}
) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(options.root ? path : `/api/v1${path}`)
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.json !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, options.json)
    if (options.text !== undefined) request = HttpClientRequest.bodyText(request, options.text, "application/json")
    if (options.bytes !== undefined) request = HttpClientRequest.bodyUint8Array(request, options.bytes)
    if (options.form !== undefined) request = HttpClientRequest.bodyUrlParams(request, options.form)
    // After the body, so that a test can send a body under another content type.
    if (options.headers) request = HttpClientRequest.setHeaders(request, options.headers)
    const response = yield* http.execute(request)
    const text = yield* response.text
    let body: any = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body }
  }).pipe(Effect.scoped, Effect.orDie)

/** The port the test server listens on. */
export const port = HttpServer.addressWith((address) => Effect.succeed(address._tag === "TcpAddress" ? address.port : 0))

/** Every error answer has the {error, details} body with the given code and a sentence. */
export const expectErrorBody = (body: unknown, code: string) => {
  expect(body).toMatchObject({ error: code })
  expect(typeof (body as { details: unknown }).details).toBe("string")
  expect((body as { details: string }).details.length).toBeGreaterThan(0)
}

/** A valid registration body, with fields to override. */
export const registerBody = (build_id: string, extra: Record<string, unknown> = {}) => ({
  build_id,
  registry: "ghcr.io/acme",
  spec_content: "name: helper\ndescription: Helps people\n",
  readme: "# Helper",
  ...extra
})
