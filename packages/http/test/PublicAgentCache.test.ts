/**
 * Agent reads are answered from a cache with an ETag (docs/performance.md),
 * one view for the account's members and one for everyone else:
 * revalidation gives 304, and every change of the account (publish, register,
 * rename) shows at once, because the event bus drops the account's entries.
 */
import { describe, expect, it } from "@effect/vitest"
import { Seed, StorageSuite } from "@hosting/testing"
import { Effect } from "effect"
import { layer, raw, registerBody } from "./HttpTestServer.js"

describe("HTTP: public agent cache", () => {
  it.layer(layer())((it) => {
    it.effect("an anonymous read carries an ETag; If-None-Match gives 304 without a body; the body is the same as uncached", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const base = `/agents/${team.account}/helper`
        expect((yield* raw("POST", `${base}/register`, { token: team.tokens.owner, json: registerBody("b-1") })).status).toBe(201)
        expect((yield* raw("POST", `${base}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })).status).toBe(201)
        const first = yield* raw("GET", base)
        const second = yield* raw("GET", base)
        expect([first.status, second.status]).toEqual([200, 200])
        expect(first.headers["etag"]).toMatch(/^W\/"[0-9a-z]+-[0-9a-z]+"$/)
        expect(second.headers["etag"]).toBe(first.headers["etag"])
        expect(second.body).toEqual(first.body)
        // The kept answer is one response shared by its reads: each read still gets its own request id.
        expect(first.headers["x-request-id"]).toBeDefined()
        expect(second.headers["x-request-id"]).toBeDefined()
        expect(second.headers["x-request-id"]).not.toBe(first.headers["x-request-id"])
        expect(first.headers["content-type"]).toContain("application/json")
        expect(first.body.versions.map((v: any) => v.version)).toEqual(["1.0.0"])
        const revalidated = yield* raw("GET", base, { headers: { "if-none-match": first.headers["etag"]! } })
        expect([revalidated.status, revalidated.body]).toEqual([304, ""])
        const other = yield* raw("GET", base, { headers: { "if-none-match": "W/\"0-0\"" } })
        expect(other.status).toBe(200)
      }))

    it.effect("a new build or version, seen by members at once, reaches anonymous readers at once too", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const base = `/agents/${team.account}/helper`
        yield* raw("POST", `${base}/register`, { token: team.tokens.owner, json: registerBody("b-1") })
        yield* raw("POST", `${base}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })
        const before = yield* raw("GET", base)
        yield* raw("GET", base)
        yield* raw("POST", `${base}/register`, { token: team.tokens.owner, json: registerBody("b-2") })
        const member = yield* raw("GET", base, { token: team.tokens.member })
        expect(member.body.versions.map((v: any) => v.build_id)).toEqual(["b-2", "b-1"])
        const anonymous = yield* raw("GET", base)
        expect(anonymous.body.versions.map((v: any) => v.build_id)).toEqual(["b-1"])
        yield* raw("POST", `${base}/publish`, { token: team.tokens.owner, json: { build_id: "b-2", version: "1.1.0" } })
        const after = yield* raw("GET", base)
        expect(after.body.versions.map((v: any) => v.version)).toEqual(["1.1.0", "1.0.0"])
        expect(after.headers["etag"]).not.toBe(before.headers["etag"])
        expect((yield* raw("GET", base, { headers: { "if-none-match": before.headers["etag"]! } })).status).toBe(200)
      }))

    it.effect("after an account rename the old address is 404 and the new one answers", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const base = `/agents/${team.account}/helper`
        yield* raw("POST", `${base}/register`, { token: team.tokens.owner, json: registerBody("b-1") })
        yield* raw("POST", `${base}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })
        yield* raw("GET", base)
        yield* raw("GET", base)
        const renamed = StorageSuite.uniqueName("renamed")
        expect((yield* raw("PUT", `/accounts/${team.account}`, { token: team.tokens.owner, json: { name: renamed } })).status).toBe(200)
        expect((yield* raw("GET", base)).status).toBe(404)
        const moved = yield* raw("GET", `/agents/${renamed}/helper`)
        expect([moved.status, moved.body.account]).toEqual([200, renamed])
      }))

    it.effect("members' view is kept apart from everyone else's: each has its own body and ETag, and a change drops both", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const base = `/agents/${team.account}/helper`
        yield* raw("POST", `${base}/register`, { token: team.tokens.owner, json: registerBody("b-1") })
        yield* raw("POST", `${base}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })
        yield* raw("POST", `${base}/register`, { token: team.tokens.owner, json: registerBody("b-2") })
        const builds = (answer: { body: any }) => answer.body.versions.map((v: any) => v.build_id)
        for (let i = 0; i < 2; i++) {
          const anonymous = yield* raw("GET", base)
          const outsider = yield* raw("GET", base, { token: team.tokens.outsider })
          const member = yield* raw("GET", base, { token: team.tokens.member })
          expect([builds(anonymous), builds(outsider), builds(member)]).toEqual([["b-1"], ["b-1"], ["b-2", "b-1"]])
          expect(outsider.headers["etag"]).toBe(anonymous.headers["etag"])
          expect(member.headers["etag"]).not.toBe(anonymous.headers["etag"])
          // The other view's ETag does not match: the member gets their whole view.
          const crossed = yield* raw("GET", base, { token: team.tokens.member, headers: { "if-none-match": anonymous.headers["etag"]! } })
          expect([crossed.status, builds(crossed)]).toEqual([200, ["b-2", "b-1"]])
          const revalidated = yield* raw("GET", base, { token: team.tokens.member, headers: { "if-none-match": member.headers["etag"]! } })
          expect(revalidated.status).toBe(304)
        }
        yield* raw("POST", `${base}/publish`, { token: team.tokens.owner, json: { build_id: "b-2", version: "1.1.0" } })
        expect(builds(yield* raw("GET", base))).toEqual(["b-2", "b-1"])
        expect((yield* raw("GET", base, { token: team.tokens.member })).body.versions[0].version).toBe("1.1.0")
      }))
  })
})
