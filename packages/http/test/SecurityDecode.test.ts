/**
 * Security middleware on the compiled app (internal/apiMiddleware.ts): a
 * scheme's handler gets the credential the platform decodes, unless it is
 * marked as reading the request itself (`markCredentialUnused`, as the
 * Authentication middleware is): then nothing is decoded for it, so that no
 * `Redacted` is made for each request.
 */
import { HttpApiError, HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Redacted } from "effect"
import { beforeOf, markCredentialUnused, runBefore } from "../src/internal/apiMiddleware.js"

class Caller extends Context.Tag("test/Caller")<Caller, string>() {}
class Either extends HttpApiMiddleware.Tag<Either>()("test/SecurityDecode/Either", {
  failure: HttpApiError.Unauthorized,
  provides: Caller,
  security: { bearer: HttpApiSecurity.bearer, cookie: HttpApiSecurity.apiKey({ in: "cookie", key: "session" }) }
}) {}
class Keyed extends HttpApiMiddleware.Tag<Keyed>()("test/SecurityDecode/Keyed", {
  failure: HttpApiError.Unauthorized,
  provides: Caller,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const request = HttpServerRequest.fromWeb(new Request("http://localhost/", { headers: { authorization: "Bearer secret" } }))

/** Runs the middleware with `handler` as the bearer scheme's; what it provided as the caller. */
const callerWith = (handler: (credential: unknown) => Effect.Effect<string>) =>
  Effect.gen(function*() {
    const before = beforeOf(new Set<HttpApiMiddleware.TagClassAny>([Keyed as never]), new Set(), Context.make(Keyed, { bearer: handler } as never))
    const services = new Map<string, unknown>()
    yield* runBefore(before, services).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request))
    return services.get(Caller.key)
  })

describe("security schemes on the compiled app", () => {
  it.effect("a handler gets the bearer token the platform decodes, as a Redacted", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const caller = yield* callerWith((credential) => {
        seen.push(credential)
        return Effect.succeed(Redacted.value(credential as Redacted.Redacted<string>))
      })
      expect(caller).toBe("secret")
      expect(seen).toHaveLength(1)
      expect(Redacted.isRedacted(seen[0])).toBe(true)
    }))

  it.effect("a handler marked as reading the request itself is given no credential, and still provides what it finds", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const caller = yield* callerWith(markCredentialUnused((credential: unknown) => {
        seen.push(credential)
        return Effect.map(HttpServerRequest.HttpServerRequest, (r) => `read ${r.headers["authorization"]}`)
      }) as never)
      expect(caller).toBe("read Bearer secret")
      expect(seen).toEqual([undefined])
    }))

  /** Runs the two-scheme middleware with these handlers; its exit. */
  const twoSchemes = (bearer: (credential: unknown) => Effect.Effect<string, unknown>, cookie: typeof bearer) => {
    const before = beforeOf(new Set<HttpApiMiddleware.TagClassAny>([Either as never]), new Set(), Context.make(Either, { bearer, cookie } as never))
    return Effect.exit(runBefore(before, new Map()).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request)))
  }

  it.effect("one handler reading the request for both schemes is tried once: its failure stands", () =>
    Effect.gen(function*() {
      let calls = 0
      const refused = new HttpApiError.Unauthorized()
      const handler = markCredentialUnused((_: unknown) => {
        calls++
        return Effect.fail(refused)
      })
      const exit = yield* twoSchemes(handler, handler)
      expect(exit).toStrictEqual(Exit.fail(refused))
      expect(calls).toBe(1)
    }))

  it.effect("a second scheme with a handler of its own is tried when the first fails", () =>
    Effect.gen(function*() {
      const tried: Array<string> = []
      const first = markCredentialUnused((_: unknown) => (tried.push("first"), Effect.fail(new HttpApiError.Unauthorized())))
      const second = markCredentialUnused((_: unknown) => (tried.push("second"), Effect.succeed("second")))
      const exit = yield* twoSchemes(first, second)
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(tried).toEqual(["first", "second"])
    }))
})
