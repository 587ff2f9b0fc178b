/**
 * Security middleware on the compiled app (internal/apiMiddleware.ts): a
 * scheme's handler gets the credential the platform decodes, unless it is
 * marked as reading the request itself (`markCredentialUnused`, as the
 * Authentication middleware is): then nothing is decoded for it, so that no
 * `Redacted` is made for each request.
 */
import { HttpApiError, HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Redacted } from "effect"
import { beforeOf, markCredentialUnused, runBefore } from "../src/internal/apiMiddleware.js"

class Caller extends Context.Tag("test/Caller")<Caller, string>() {}
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
})
