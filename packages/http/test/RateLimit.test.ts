/**
 * Rate limiting per user and per client address: 429 `rate_limited` with
 * `Retry-After` and `RateLimit-*` headers, one bucket for all of a user's
 * tokens and sessions, made-up tokens charged to their address, buckets that
 * refill, X-Forwarded-For trusted only as far as configured.
 */
import { describe, expect, it, layer as withLayer } from "@effect/vitest"
import { RateLimit } from "@hosting/http"
import { Seed } from "@hosting/testing"
import { Effect } from "effect"
import { expectErrorBody, layer, raw } from "./HttpTestServer.js"

/** The limiter's clock: real time plus what a test skipped. */
let skipped = 0
const now = () => Date.now() + skipped

const perWindow = 3
const windowSeconds = 60

/** Each test calls from addresses of its own, as seen by the trusted proxy in front. */
const from = (address: string) => ({ "x-forwarded-for": `203.0.113.250, ${address}` })

describe("rate limits", () => {
  it("X-Forwarded-For counts only as far as proxies are trusted; IPv6 counts per /64", () => {
    const direct = RateLimit.make({ perIp: { requests: 1, seconds: 1 } })
    expect(direct.clientAddress("192.0.2.1", "198.51.100.7")).toBe("192.0.2.1")
    expect(direct.clientAddress("::ffff:192.0.2.1", undefined)).toBe("192.0.2.1")
    const oneProxy = RateLimit.make({ perIp: { requests: 1, seconds: 1 }, trustedProxies: 1 })
    expect(oneProxy.clientAddress("10.0.0.1", "6.6.6.6, 198.51.100.7")).toBe("198.51.100.7")
    const twoProxies = RateLimit.make({ perIp: { requests: 1, seconds: 1 }, trustedProxies: 2 })
    expect(twoProxies.clientAddress("10.0.0.1", "6.6.6.6, 198.51.100.7, 10.0.0.9")).toBe("198.51.100.7")
    expect(direct.clientAddress("2001:db8:1:2:3:4:5:6", undefined)).toBe(direct.clientAddress("2001:db8:1:2::9", undefined))
    expect(direct.clientAddress("2001:db8:1:2::9", undefined)).not.toBe(direct.clientAddress("2001:db8:1:3::9", undefined))
  })

  it("parses <requests>/<seconds>, off and empty; refuses the rest", () => {
    expect(RateLimit.parseRate("600/60")).toEqual({ requests: 600, seconds: 60 })
    expect(RateLimit.parseRate("off")).toBeUndefined()
    expect(RateLimit.parseRate("")).toBeUndefined()
    expect(RateLimit.parseRate("0/60")).toBe("invalid")
    expect(RateLimit.parseRate("ten/60")).toBe("invalid")
  })

  withLayer(
    layer({
      rateLimit: {
        perUser: { requests: perWindow, seconds: windowSeconds },
        perIp: { requests: perWindow, seconds: windowSeconds },
        trustedProxies: 1,
        now
      }
    }),
    { excludeTestServices: true }
  )((it) => {
    it.effect("an address gets N anonymous requests, then 429 rate_limited with Retry-After; other addresses go on", () =>
      Effect.gen(function*() {
        const served = []
        for (let i = 0; i < perWindow; i++) served.push(yield* raw("GET", "/agents", { headers: from("198.51.100.1") }))
        expect(served.map((r) => r.status)).toEqual([200, 200, 200])
        expect(served.map((r) => r.headers["ratelimit-remaining"])).toEqual(["2", "1", "0"])
        expect(served[0]!.headers["ratelimit-limit"]).toBe(String(perWindow))
        const refused = yield* raw("GET", "/agents", { headers: from("198.51.100.1") })
        expect(refused.status).toBe(429)
        expectErrorBody(refused.body, "rate_limited")
        const retryAfter = Number(refused.headers["retry-after"])
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(windowSeconds / perWindow)
        expect((yield* raw("GET", "/agents", { headers: from("198.51.100.2") })).status).toBe(200)
      }))

    it.effect("made-up tokens are charged to their address: a flood of them is 429 once the address's budget is spent", () =>
      Effect.gen(function*() {
        const statuses = []
        for (let i = 0; i < perWindow + 2; i++) {
          const answer = yield* raw("GET", "/me", { token: `made-up-${crypto.randomUUID()}`, headers: from("198.51.100.3") })
          statuses.push(answer.status)
        }
        expect(statuses).toEqual([401, 401, 401, 429, 429])
      }))

    it.effect("a signed-in user has a budget of their own, apart from their address's; past it, 429 names the user", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const address = from("198.51.100.4")
        // The first request of a token is charged to its address and to its user; afterwards the token is known.
        expect((yield* raw("GET", "/me", { token: team.tokens.owner, headers: address })).status).toBe(200)
        for (let i = 0; i < perWindow - 1; i++) expect((yield* raw("GET", "/agents", { headers: address })).status).toBe(200)
        expect((yield* raw("GET", "/agents", { headers: address })).status).toBe(429)
        // The address is spent, the user is not.
        const own = []
        for (let i = 0; i < perWindow - 1; i++) own.push((yield* raw("GET", "/me", { token: team.tokens.owner, headers: address })).status)
        expect(own).toEqual([200, 200])
        const refused = yield* raw("GET", "/me", { token: team.tokens.owner, headers: address })
        expect(refused.status).toBe(429)
        expectErrorBody(refused.body, "rate_limited")
        expect(refused.body.details).toContain("user")
        expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1)
        // Another person's token is not affected.
        expect((yield* raw("GET", "/me", { token: team.tokens.admin, headers: from("198.51.100.5") })).status).toBe(200)
      }))

    it.effect("new sessions buy no more requests: every token and session of a user draws on one bucket", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        // Two browser sessions signed in with the member's token, each from an address of its own.
        const sessions = []
        for (let i = 0; i < 2; i++) {
          const signedIn = yield* raw("POST", "/session", { json: { token: team.tokens.member }, headers: from(`198.51.100.${20 + i}`) })
          expect(signedIn.status).toBe(200)
          sessions.push((signedIn.headers["set-cookie"] ?? "").split(";")[0]!)
        }
        // The token and each session, from addresses with budget to spare: three requests for the person in all.
        const statuses = [
          (yield* raw("GET", "/me", { token: team.tokens.member, headers: from("198.51.100.30") })).status,
          (yield* raw("GET", "/me", { headers: { cookie: sessions[0]!, ...from("198.51.100.31") } })).status,
          (yield* raw("GET", "/me", { headers: { cookie: sessions[1]!, ...from("198.51.100.32") } })).status,
          (yield* raw("GET", "/me", { headers: { cookie: sessions[1]!, ...from("198.51.100.33") } })).status,
          (yield* raw("GET", "/me", { token: team.tokens.member, headers: from("198.51.100.34") })).status
        ]
        expect(statuses).toEqual([200, 200, 200, 429, 429])
        // Someone else's budget is untouched.
        expect((yield* raw("GET", "/me", { token: team.tokens.admin, headers: from("198.51.100.35") })).status).toBe(200)
      }))

    it.effect("the bucket refills: after Retry-After seconds the address is served again", () =>
      Effect.gen(function*() {
        const address = from("198.51.100.6")
        for (let i = 0; i < perWindow; i++) expect((yield* raw("GET", "/agents", { headers: address })).status).toBe(200)
        const refused = yield* raw("GET", "/agents", { headers: address })
        expect(refused.status).toBe(429)
        skipped += Number(refused.headers["retry-after"]) * 1000
        const again = yield* raw("GET", "/agents", { headers: address })
        expect(again.status).toBe(200)
        expect(again.headers["ratelimit-remaining"]).toBe("0")
        expect((yield* raw("GET", "/agents", { headers: address })).status).toBe(429)
      }))
  })
})
