/**
 * `ApiApp.serve` answers what `HttpApiBuilder.serve` answers for what
 * HostingApi does not use but an embedder may (the parity test covers every
 * endpoint of HostingApi): several success schemas with their statuses, an
 * empty answer, text and bytes, middleware of the API, of a group and of an
 * endpoint (their order, what they provide, an optional one that fails),
 * query parameters that repeat, a HEAD on a GET route, refused path
 * parameters, errors of the definition encoded without any error middleware,
 * and a group built with the platform's `group` beside ours. Inputs of
 * every part (path, payload, headers, query), refused in each combination,
 * and parts whose schemas need effects, get the platform's answers: the
 * compiled app decodes what it can without steps, and must still report
 * the failure of the part the platform decodes first.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiError,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  HttpClient,
  HttpClientRequest,
  HttpServerRequest
} from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ApiApp } from "@hosting/http"
import { NodeServer } from "@hosting/http-node"
import { Context, Effect, Layer, ParseResult, Redacted, Schema } from "effect"

class Trail extends Context.Tag("test/Trail")<Trail, ReadonlyArray<string>>() {}
class Caller extends Context.Tag("test/Caller")<Caller, string>() {}

/** Adds its name to the trail it finds (so the order shows in the answer). */
class First extends HttpApiMiddleware.Tag<First>()("test/First", { provides: Trail }) {}
class Second extends HttpApiMiddleware.Tag<Second>()("test/Second", { provides: Trail }) {}
/** Fails unless the request carries `x-maybe`; optional, so the route runs without it. */
class Maybe extends HttpApiMiddleware.Tag<Maybe>()("test/Maybe", { optional: true, provides: Caller }) {}
/** A bearer token, else an `api_key` in the query. */
class Keyed extends HttpApiMiddleware.Tag<Keyed>()("test/Keyed", {
  failure: HttpApiError.Unauthorized,
  provides: Caller,
  security: { bearer: HttpApiSecurity.bearer, key: HttpApiSecurity.apiKey({ in: "query", key: "api_key" }) }
}) {}
/** The API's own middleware: refuses requests that carry `x-refuse`. */
class Gate extends HttpApiMiddleware.Tag<Gate>()("test/Gate", { failure: HttpApiError.Forbidden }) {}

class Teapot extends Schema.TaggedError<Teapot>()("Teapot", { why: Schema.String }, HttpApiSchema.annotations({ status: 418 })) {}

/** A string upper-cased after a yield (so only the effectful decoder can decode it); "bad" is refused. */
const Slow = Schema.transformOrFail(Schema.String, Schema.String, {
  decode: (text, _, ast) =>
    Effect.flatMap(Effect.yieldNow(), () =>
      text === "bad" ? ParseResult.fail(new ParseResult.Type(ast, text, "slowly refused")) : ParseResult.succeed(text.toUpperCase())),
  encode: ParseResult.succeed
})

const Created = Schema.Struct({ created: Schema.String }).annotations(HttpApiSchema.annotations({ status: 201 }))
const Existing = Schema.Struct({ existing: Schema.Number })

class Ours extends HttpApiGroup.make("ours")
  .add(
    HttpApiEndpoint.get("either", "/either/:id")
      .setPath(Schema.Struct({ id: Schema.NumberFromString }))
      .addSuccess(Existing)
      .addSuccess(Created)
  )
  .add(HttpApiEndpoint.del("empty", "/empty").addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.get("text", "/text").addSuccess(HttpApiSchema.Text()))
  .add(HttpApiEndpoint.get("bytes", "/bytes").addSuccess(HttpApiSchema.Uint8Array()))
  .add(HttpApiEndpoint.get("trail", "/trail").addSuccess(Schema.Struct({ trail: Schema.Array(Schema.String) })).middleware(Second))
  .add(HttpApiEndpoint.get("maybe", "/maybe").addSuccess(Schema.Struct({ caller: Schema.String })).middleware(Maybe))
  .add(HttpApiEndpoint.get("keyed", "/keyed").addSuccess(Schema.Struct({ caller: Schema.String })).middleware(Keyed))
  .add(
    HttpApiEndpoint.get("query", "/query")
      .setUrlParams(Schema.Struct({ tag: Schema.Array(Schema.String), one: Schema.optional(Schema.String) }))
      .addSuccess(Schema.Struct({ tag: Schema.Array(Schema.String), one: Schema.optional(Schema.String) }))
  )
  .add(
    HttpApiEndpoint.post("echo", "/echo")
      .setPayload(Schema.Struct({ n: Schema.Int }))
      .addSuccess(Schema.Struct({ twice: Schema.Int }))
  )
  .add(
    HttpApiEndpoint.post("parts", "/parts/:id")
      .setPath(Schema.Struct({ id: Schema.NumberFromString }))
      .setPayload(Schema.Struct({ n: Schema.Int }))
      .setHeaders(Schema.Struct({ "x-n": Schema.NumberFromString }))
      .setUrlParams(Schema.Struct({ q: Schema.NumberFromString }))
      .addSuccess(Schema.Struct({ sum: Schema.Number }))
  )
  .add(
    HttpApiEndpoint.get("find", "/find")
      .setPayload(Schema.Struct({ k: Schema.NumberFromString }))
      .addSuccess(Schema.Struct({ k: Schema.Number }))
  )
  .add(
    HttpApiEndpoint.post("slow", "/slow/:name")
      .setPath(Schema.Struct({ name: Slow }))
      .setPayload(Schema.Struct({ word: Slow }))
      .setUrlParams(Schema.Struct({ q: Schema.NumberFromString }))
      .addSuccess(Schema.Struct({ name: Schema.String, word: Schema.String }))
  )
  .add(HttpApiEndpoint.get("teapot", "/teapot").addSuccess(Schema.Struct({})).addError(Teapot))
  .middleware(First)
{}

class Theirs extends HttpApiGroup.make("theirs").add(HttpApiEndpoint.get("plain", "/plain/:name").setPath(Schema.Struct({ name: Schema.String })).addSuccess(Schema.Struct({ hello: Schema.String }))) {}

class Api extends HttpApi.make("test").add(Ours).add(Theirs).middleware(Gate) {}

const handlersOf = (group: typeof ApiApp.group) =>
  group(Api, "ours", (handlers) =>
    handlers
      .handle("either", ({ path }) => Effect.succeed(path.id % 2 === 0 ? { existing: path.id } : { created: `#${path.id}` }))
      .handle("empty", () => Effect.void)
      .handle("text", () => Effect.succeed("plain words"))
      .handle("bytes", () => Effect.succeed(new Uint8Array([1, 2, 3])))
      .handle("trail", () => Effect.map(Trail, (trail) => ({ trail: [...trail] })))
      .handle("maybe", () => Effect.map(Effect.serviceOption(Caller), (caller) => ({ caller: caller._tag === "Some" ? caller.value : "nobody" })))
      .handle("keyed", () => Effect.map(Caller, (caller) => ({ caller })))
      .handle("query", ({ urlParams }) => Effect.succeed(urlParams))
      .handle("echo", ({ payload }) => Effect.succeed({ twice: payload.n * 2 }))
      .handle("parts", ({ headers, path, payload, urlParams }) =>
        Effect.succeed({ sum: path.id + payload.n + headers["x-n"] + urlParams.q }))
      .handle("find", ({ payload }) => Effect.succeed(payload))
      .handle("slow", ({ path, payload }) => Effect.succeed({ name: path.name, word: payload.word }))
      .handle("teapot", () => Effect.fail(new Teapot({ why: "short and stout" }))))

const TheirsLive = HttpApiBuilder.group(Api, "theirs", (handlers) =>
  handlers.handle("plain", ({ path }) => Effect.succeed({ hello: path.name })))

const appendTrail = (name: string) =>
  Effect.map(Effect.serviceOption(Trail), (trail) => [...(trail._tag === "Some" ? trail.value : []), name])

const middleware = Layer.mergeAll(
  Layer.succeed(First, appendTrail("first")),
  Layer.succeed(Second, appendTrail("second")),
  Layer.succeed(
    Maybe,
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      request.headers["x-maybe"] === undefined ? Effect.fail("no x-maybe") : Effect.succeed(request.headers["x-maybe"]))
  ),
  Layer.succeed(Keyed, {
    bearer: (token: Redacted.Redacted) =>
      Redacted.value(token) === "good" ? Effect.succeed("bearer") : Effect.fail(new HttpApiError.Unauthorized()),
    key: (key: Redacted.Redacted) =>
      Redacted.value(key) === "good" ? Effect.succeed("key") : Effect.fail(new HttpApiError.Unauthorized())
  }),
  Layer.succeed(
    Gate,
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      request.headers["x-refuse"] === undefined ? Effect.void : Effect.fail(new HttpApiError.Forbidden()))
  )
)

const served = (serve: typeof ApiApp.serve, group: typeof ApiApp.group) =>
  serve().pipe(
    Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide([handlersOf(group), TheirsLive]), Layer.provide(middleware))),
    Layer.provideMerge(NodeServer.layerTest)
  )

interface Call {
  readonly method: "GET" | "POST" | "DELETE" | "HEAD"
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: string
}

const calls: ReadonlyArray<Call> = [
  { method: "GET", path: "/either/4" },
  { method: "GET", path: "/either/5" },
  { method: "GET", path: "/either/five" },
  { method: "DELETE", path: "/empty" },
  { method: "GET", path: "/text" },
  { method: "GET", path: "/bytes" },
  { method: "GET", path: "/trail" },
  { method: "GET", path: "/maybe" },
  { method: "GET", path: "/maybe", headers: { "x-maybe": "someone" } },
  { method: "GET", path: "/keyed" },
  { method: "GET", path: "/keyed", headers: { authorization: "Bearer good" } },
  { method: "GET", path: "/keyed", headers: { authorization: "Bearer bad" } },
  { method: "GET", path: "/keyed?api_key=good" },
  { method: "GET", path: "/query?tag=a" },
  { method: "GET", path: "/query?tag=a&tag=b&one=x" },
  { method: "GET", path: "/query?one=x&one=y" },
  { method: "POST", path: "/echo", headers: { "content-type": "application/json" }, body: `{"n":21}` },
  { method: "POST", path: "/echo", headers: { "content-type": "application/json" }, body: `{"n":1.5}` },
  ...[
    // Each part refused alone, and with every part after it refused too (the first in the platform's order is reported).
    ["1", `{"n":2}`, "3", "4"],
    ["one", `{"n":2}`, "3", "4"],
    ["one", `{"n":2.5}`, "three", "four"],
    ["1", `{"n":2.5}`, "3", "4"],
    ["1", `{"n":2.5}`, "three", "four"],
    ["1", `{"n"`, "three", "four"],
    ["1", `{"n":2}`, "three", "4"],
    ["1", `{"n":2}`, "three", "four"],
    ["1", `{"n":2}`, "3", "four"]
  ].map(([id, body, header, query]): Call => ({
    method: "POST",
    path: `/parts/${id}?q=${query}`,
    headers: { "content-type": "application/json", "x-n": header! },
    body: body!
  })),
  { method: "POST", path: "/parts/1?q=4", headers: { "content-type": "application/json" }, body: `{"n":2}` },
  { method: "GET", path: "/find?k=7" },
  { method: "GET", path: "/find?k=seven" },
  { method: "GET", path: "/find" },
  ...[
    ["ada", `{"word":"hi"}`, "1"],
    ["bad", `{"word":"hi"}`, "one"],
    ["ada", `{"word":"bad"}`, "one"],
    ["ada", `{"word":"hi"}`, "one"],
    ["ada", `{"word":5}`, "1"]
  ].map(([name, body, query]): Call => ({
    method: "POST",
    path: `/slow/${name}?q=${query}`,
    headers: { "content-type": "application/json" },
    body: body!
  })),
  { method: "GET", path: "/teapot" },
  { method: "GET", path: "/trail", headers: { "x-refuse": "1" } },
  { method: "GET", path: "/nowhere", headers: { "x-refuse": "1" } },
  { method: "HEAD", path: "/text" },
  { method: "GET", path: "/plain/caf%C3%A9" },
  { method: "GET", path: "/plain/" },
  { method: "GET", path: "/text/" }
]

/** What a call is answered: the status, the content type and length, and the body. */
const answers = Effect.gen(function*() {
  const client = yield* HttpClient.HttpClient
  const out: Array<unknown> = []
  for (const call of calls) {
    let request = HttpClientRequest.make(call.method)(call.path).pipe(HttpClientRequest.setHeaders(call.headers ?? {}))
    if (call.body !== undefined) request = HttpClientRequest.bodyText(request, call.body, call.headers?.["content-type"])
    const response = yield* client.execute(request)
    const body = call.method === "HEAD" ? "" : yield* response.text
    out.push({
      call: `${call.method} ${call.path}${call.headers === undefined ? "" : ` ${JSON.stringify(call.headers)}`}${
        call.body === undefined ? "" : ` ${call.body}`
      }`,
      status: response.status,
      type: response.headers["content-type"],
      length: response.headers["content-length"],
      body
    })
  }
  return out
})

const run = (serve: typeof ApiApp.serve, group: typeof ApiApp.group) =>
  Effect.scoped(Effect.flatMap(Layer.build(served(serve, group)), (context) => Effect.provide(answers, context)))

describe("ApiApp", () => {
  it.effect("answers what HttpApiBuilder.serve answers, for the platform's features HostingApi does not use", () =>
    Effect.gen(function*() {
      const ours = yield* run(ApiApp.serve, ApiApp.group)
      const platform = yield* run(HttpApiBuilder.serve as unknown as typeof ApiApp.serve, HttpApiBuilder.group)
      expect(ours).toEqual(platform)
      // The answers are what the definition says, not two servers agreeing on something else.
      const byCall = new Map((ours as Array<{ call: string }>).map((answer) => [answer.call, answer]))
      expect(byCall.get("GET /either/4")).toMatchObject({ status: 200, body: `{"existing":4}` })
      expect(byCall.get("GET /either/5")).toMatchObject({ status: 201, body: `{"created":"#5"}` })
      expect(byCall.get("GET /either/five")).toMatchObject({ status: 400 })
      expect(byCall.get("DELETE /empty")).toMatchObject({ status: 204, body: "" })
      expect(byCall.get("GET /trail")).toMatchObject({ status: 200, body: `{"trail":["second","first"]}` })
      expect(byCall.get("GET /maybe")).toMatchObject({ body: `{"caller":"nobody"}` })
      expect(byCall.get("GET /keyed?api_key=good")).toMatchObject({ body: `{"caller":"key"}` })
      expect(byCall.get("GET /query?tag=a")).toMatchObject({ body: `{"tag":["a"]}` })
      expect(byCall.get("GET /teapot")).toMatchObject({ status: 418 })
      const parts = (path: string, header: string, body: string) =>
        byCall.get(`POST ${path} ${JSON.stringify({ "content-type": "application/json", "x-n": header })} ${body}`)
      expect(parts("/parts/1?q=4", "3", `{"n":2}`)).toMatchObject({ status: 200, body: `{"sum":10}` })
      for (const [path, header, body, part] of [
        ["/parts/one?q=4", "3", `{"n":2}`, "NumberFromString"],
        ["/parts/one?q=four", "three", `{"n":2.5}`, "NumberFromString"],
        ["/parts/1?q=4", "3", `{"n":2.5}`, "Expected an integer"],
        ["/parts/1?q=four", "three", `{"n":2.5}`, "Expected an integer"],
        ["/parts/1?q=4", "three", `{"n":2}`, "x-n"],
        ["/parts/1?q=four", "three", `{"n":2}`, "x-n"],
        ["/parts/1?q=four", "3", `{"n":2}`, `"q"`]
      ] as const) {
        // The failure of the part decoded first, whatever fails after it.
        expect(parts(path, header, body)).toMatchObject({ status: 400, body: expect.stringContaining(part.replaceAll(`"`, `\\"`)) })
      }
      // Unreadable JSON is the payload's failure too, before the header's and the query's.
      expect(parts("/parts/1?q=four", "three", `{"n"`)).toMatchObject({ status: 400 })
      expect(byCall.get("GET /find?k=7")).toMatchObject({ status: 200, body: `{"k":7}` })
      expect(byCall.get("GET /find?k=seven")).toMatchObject({ status: 400 })
      expect(byCall.get(`POST /slow/ada?q=1 {"content-type":"application/json"} {"word":"hi"}`)).toMatchObject({
        status: 200,
        body: `{"name":"ADA","word":"HI"}`
      })
      expect(byCall.get(`POST /slow/bad?q=one {"content-type":"application/json"} {"word":"hi"}`)).toMatchObject({
        status: 400,
        body: expect.stringContaining("slowly refused")
      })
      expect(byCall.get(`POST /slow/ada?q=one {"content-type":"application/json"} {"word":"bad"}`)).toMatchObject({
        status: 400,
        body: expect.stringContaining("slowly refused")
      })
      expect(byCall.get(`GET /trail {"x-refuse":"1"}`)).toMatchObject({ status: 403 })
      expect(byCall.get(`GET /nowhere {"x-refuse":"1"}`)).toMatchObject({ status: 403 })
      expect(byCall.get("GET /plain/caf%C3%A9")).toMatchObject({ body: `{"hello":"café"}` })
    }))
})
