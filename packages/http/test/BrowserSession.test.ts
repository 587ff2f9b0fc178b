/**
 * The dashboard's browser session: a token becomes an HttpOnly,
 * SameSite=Strict cookie that every route accepts (event streams included),
 * with the CSRF header required on state-changing requests.
 */
import { describe, expect, it } from "@effect/vitest"
import { Seed } from "@hosting/testing"
import { Effect } from "effect"
import { expectErrorBody, layer, port, raw, registerBody } from "./HttpTestServer.js"
import { open } from "./sse.js"

/** Signs in with a token; the cookie pair to send back, the CSRF value and the raw answer. */
const signIn = (token: string, headers: Record<string, string> = {}) =>
  Effect.map(raw("POST", "/session", { json: { token }, headers }), (r) => ({
    ...r,
    cookie: (r.headers["set-cookie"] ?? "").split(";")[0]!,
    csrf: r.body?.csrf as string
  }))

describe("HTTP: browser session", () => {
  it.layer(layer())((it) => {
    it.effect("sign-in with a token sets an HttpOnly, SameSite=Strict cookie on /api/v1 and gives the user and a CSRF value", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const session = yield* signIn(team.tokens.member)
        expect(session.status).toBe(200)
        expect(session.body.user).toEqual({ id: team.principals.member.user.id, name: "The member" })
        expect(session.body.expires_in).toBe(12 * 3600)
        expect(session.csrf.length).toBeGreaterThanOrEqual(32)
        const cookie = session.headers["set-cookie"]!
        expect(cookie).toMatch(/^hosting_session=[^;]+; /)
        expect(cookie).toContain("HttpOnly")
        expect(cookie).toContain("SameSite=Strict")
        expect(cookie).toContain("Path=/api/v1")
        expect(cookie).toContain("Max-Age=43200")
        // Not the token itself: a session of its own, which sign-out can end alone.
        expect(session.cookie).not.toContain(team.tokens.member)
        expect(session.headers["cache-control"]).toBe("no-store")

        const current = yield* raw("GET", "/session", { headers: { cookie: session.cookie } })
        expect(current.status).toBe(200)
        expect(current.body).toEqual({ user: session.body.user, csrf: session.csrf })
      }))

    it.effect("a bad token is 401 without a cookie; without a cookie GET /session is 401; a sign-in from another origin is 403", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const bad = yield* signIn("not-a-token")
        expect(bad.status).toBe(401)
        expectErrorBody(bad.body, "unauthorized")
        expect(bad.headers["set-cookie"]).toBeUndefined()
        const none = yield* raw("GET", "/session")
        expect(none.status).toBe(401)
        expectErrorBody(none.body, "unauthorized")
        const stale = yield* raw("GET", "/session", { headers: { cookie: "hosting_session=stale" } })
        expect(stale.status).toBe(401)
        const foreign = yield* signIn(team.tokens.member, { origin: "https://evil.example" })
        expect(foreign.status).toBe(403)
        expectErrorBody(foreign.body, "forbidden")
        expect(foreign.headers["set-cookie"]).toBeUndefined()
      }))

    it.effect("the cookie authenticates reads; a state-changing request needs X-CSRF-Token (403 and no change without it)", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const { cookie, csrf } = yield* signIn(team.tokens.owner)
        const account = yield* raw("GET", `/accounts/${team.account}`, { headers: { cookie } })
        expect(account.status).toBe(200)
        expect(account.body.name).toBe(team.account)

        const path = `/agents/${team.account}/helper/register`
        const refused = yield* raw("POST", path, { json: registerBody("b-1"), headers: { cookie } })
        expect(refused.status).toBe(403)
        expectErrorBody(refused.body, "forbidden")
        expect(refused.body.details).toContain("X-CSRF-Token")
        const wrong = yield* raw("POST", path, { json: registerBody("b-1"), headers: { cookie, "x-csrf-token": `${csrf}x` } })
        expect(wrong.status).toBe(403)
        const builds = yield* raw("GET", `/agents/${team.account}/helper`, { token: team.tokens.owner })
        expect(builds.status).toBe(404)

        const accepted = yield* raw("POST", path, { json: registerBody("b-1"), headers: { cookie, "x-csrf-token": csrf } })
        expect(accepted.status).toBe(201)
      }))

    it.effect("a bearer header wins over the cookie; an ended cookie is 401 on protected routes and anonymous on public ones", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const { cookie } = yield* signIn(team.tokens.owner)
        const asOutsider = yield* raw("GET", `/accounts/${team.account}`, { token: team.tokens.outsider, headers: { cookie } })
        expect(asOutsider.status).toBe(403)

        const stale = { cookie: "hosting_session=ended" }
        const protectedRead = yield* raw("GET", `/accounts/${team.account}`, { headers: stale })
        expect(protectedRead.status).toBe(401)
        expect(protectedRead.body.details).toContain("session has ended")
        const catalog = yield* raw("GET", "/agents", { headers: stale })
        expect(catalog.status).toBe(200)
      }))

    it.effect("the account event stream accepts the cookie, as a browser's EventSource sends it", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const { cookie } = yield* signIn(team.tokens.member)
        const url = `http://127.0.0.1:${yield* port}/api/v1/accounts/${team.account}/events`
        const stream = yield* Effect.promise(() => open(url, { cookie }))
        try {
          expect(stream.status).toBe(200)
          const [ready] = yield* Effect.promise(() => stream.next(1, 5000))
          expect(ready!.event).toBe("ready")
        } finally {
          stream.close()
        }
        const outsider = yield* signIn(team.tokens.outsider)
        const refused = yield* Effect.promise(() => open(url, { cookie: outsider.cookie }))
        expect(refused.status).toBe(403)
      }))

    it.effect("sign-out needs the CSRF value, ends the session (the cookie stops working) and clears the cookie", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const { cookie, csrf } = yield* signIn(team.tokens.admin)
        const refused = yield* raw("DELETE", "/session", { headers: { cookie } })
        expect(refused.status).toBe(403)
        expect((yield* raw("GET", "/session", { headers: { cookie } })).status).toBe(200)

        const out = yield* raw("DELETE", "/session", { headers: { cookie, "x-csrf-token": csrf } })
        expect(out.status).toBe(204)
        expect(out.headers["set-cookie"]).toMatch(/^hosting_session=; .*Max-Age=0/)
        expect((yield* raw("GET", "/session", { headers: { cookie } })).status).toBe(401)
        expect((yield* raw("GET", `/accounts/${team.account}`, { headers: { cookie } })).status).toBe(401)
        // The platform token itself still works: only the session ended.
        expect((yield* raw("GET", `/accounts/${team.account}`, { token: team.tokens.admin })).status).toBe(200)
        // Signing out without a session is a no-op.
        expect((yield* raw("DELETE", "/session")).status).toBe(204)
      }))

    it.effect("the dashboard's session also signs in the device approval page", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const { cookie } = yield* signIn(team.tokens.member)
        const page = yield* raw("GET", "/device", { headers: { cookie } })
        expect(page.status).toBe(200)
        expect(page.body).toContain("Signed in as <strong>The member</strong>")
      }))
  })
})
