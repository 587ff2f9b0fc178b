/**
 * Device login over HTTP (extensions.md "Device flow", RFC 8628), the
 * approval page, revocation (RFC 7009) and the metadata (RFC 8414).
 */
import { describe, expect, it } from "@effect/vitest"
import { Seed } from "@hosting/testing"
import { Effect, TestClock } from "effect"
import { expectErrorBody, layer, raw } from "./HttpTestServer.js"

const grant = "urn:ietf:params:oauth:grant-type:device_code"

const startLogin = Effect.map(raw("POST", "/oauth/device/code", { form: { client_id: "hosting-cli" } }), (r) => {
  expect(r.status).toBe(200)
  return r.body as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; interval: number; expires_in: number }
})

const poll = (deviceCode: string) => raw("POST", "/oauth/token", { form: { grant_type: grant, device_code: deviceCode, client_id: "hosting-cli" } })

/** Expects the RFC 6749 error body (with our `details`). */
const expectOAuthError = (r: { status: number; body: any }, code: string) => {
  expect(r.status).toBe(400)
  expect(r.body.error).toBe(code)
  expect(r.body.error_description).toBe(r.body.details)
  expect(r.body.details.length).toBeGreaterThan(0)
}

const cookieOf = (headers: Record<string, string | undefined>) => {
  const set = headers["set-cookie"] ?? ""
  return { header: set, pair: set.split(";")[0]! }
}

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1]

/** Signs in on the approval page; resolves with the session cookie and the page. */
const signIn = (token: string, userCode: string) =>
  Effect.map(raw("POST", "/device/session", { form: { token, user_code: userCode } }), (r) => ({ ...r, cookie: cookieOf(r.headers) }))

const decide = (cookie: string, userCode: string, decision: "approve" | "deny", csrf: string, headers: Record<string, string> = {}) =>
  raw("POST", "/device", { form: { user_code: userCode, decision, csrf }, headers: { cookie, ...headers } })

/** A device login approved on the page by someone signed in with `token`: the codes, the page's session and its CSRF value. */
const approvedLogin = (token: string) =>
  Effect.gen(function*() {
    const login = yield* startLogin
    const page = yield* signIn(token, login.user_code)
    const csrf = csrfOf(page.body)!
    expect((yield* decide(page.cookie.pair, login.user_code, "approve", csrf)).status).toBe(200)
    return { login, session: page.cookie.pair, csrf }
  })

describe("HTTP: device login", () => {
  it.layer(layer())((it) => {
    it.effect("the metadata names the endpoints (RFC 8414), under the base and at the root path the issuer's path derives", () =>
      Effect.gen(function*() {
        const base = yield* raw("GET", "/.well-known/oauth-authorization-server")
        expect(base.status).toBe(200)
        const issuer: string = base.body.issuer
        expect(issuer).toMatch(/^http:\/\/[^/]+\/api\/v1$/)
        expect(base.body).toMatchObject({
          device_authorization_endpoint: `${issuer}/oauth/device/code`,
          token_endpoint: `${issuer}/oauth/token`,
          revocation_endpoint: `${issuer}/oauth/revoke`,
          grant_types_supported: [grant]
        })
        const root = yield* raw("GET", "/.well-known/oauth-authorization-server/api/v1", { root: true })
        expect(root.body).toEqual(base.body)
      }))

    it.effect("a device code request gives codes and the page's URIs; without client_id it is 400 invalid_request", () =>
      Effect.gen(function*() {
        const login = yield* startLogin
        expect(login.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
        expect(login.device_code.length).toBeGreaterThanOrEqual(43)
        expect([login.expires_in, login.interval]).toEqual([600, 5])
        expect(login.verification_uri).toMatch(/\/api\/v1\/device$/)
        expect(login.verification_uri_complete).toBe(`${login.verification_uri}?user_code=${login.user_code}`)
        const missing = yield* raw("POST", "/oauth/device/code", { form: {} })
        expect(missing.status).toBe(400)
        expect(missing.body.error).toBe("invalid_request")
      }))

    it.effect("polling: authorization_pending, slow_down when too fast (interval + 5 s), the token once approved, and only once", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const login = yield* startLogin
        expectOAuthError(yield* poll(login.device_code), "authorization_pending")
        expectOAuthError(yield* poll(login.device_code), "slow_down")
        yield* TestClock.adjust("6 seconds")
        // The interval is 10 s now: 6 s later is still too fast.
        expectOAuthError(yield* poll(login.device_code), "slow_down")
        yield* TestClock.adjust("16 seconds")
        expectOAuthError(yield* poll(login.device_code), "authorization_pending")

        const session = yield* signIn(team.tokens.member, login.user_code)
        expect(session.status).toBe(200)
        const csrf = csrfOf(session.body)!
        expect(csrf).toMatch(/^[0-9a-f]{64}$/)
        const approved = yield* decide(session.cookie.pair, login.user_code, "approve", csrf)
        expect(approved.status).toBe(200)
        expect(approved.body).toContain("Device approved")

        yield* TestClock.adjust("16 seconds")
        const token = yield* poll(login.device_code)
        expect(token.status).toBe(200)
        expect(token.headers["cache-control"]).toBe("no-store")
        expect(token.body).toMatchObject({ token_type: "Bearer", expires_in: 30 * 24 * 3600 })
        const me = yield* raw("GET", "/me", { token: token.body.access_token })
        expect([me.status, me.body.user.id]).toEqual([200, team.principals.member.user.id])
        yield* TestClock.adjust("16 seconds")
        expectOAuthError(yield* poll(login.device_code), "invalid_grant")
      }))

    it.effect("a denied login is access_denied; an unapproved one expires (expired_token); other grant types are refused", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const denied = yield* startLogin
        const session = yield* signIn(team.tokens.owner, denied.user_code)
        const page = yield* decide(session.cookie.pair, denied.user_code, "deny", csrfOf(session.body)!)
        expect(page.body).toContain("Device denied")
        expectOAuthError(yield* poll(denied.device_code), "access_denied")

        const late = yield* startLogin
        yield* TestClock.adjust("11 minutes")
        expectOAuthError(yield* poll(late.device_code), "expired_token")
        const expiredPage = yield* raw("GET", `/device?user_code=${late.user_code}`, { headers: { cookie: session.cookie.pair } })
        expect(expiredPage.body).toContain("No login is waiting")

        expectOAuthError(yield* raw("POST", "/oauth/token", { form: { grant_type: "password" } }), "unsupported_grant_type")
        expectOAuthError(yield* raw("POST", "/oauth/token", { form: { grant_type: grant, device_code: "nope" } }), "invalid_grant")
      }))

    it.effect("the approval page: sign-in form first, a bad token refused (401), an HttpOnly SameSite=Strict cookie, codes typed loosely", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const login = yield* startLogin
        const anonymous = yield* raw("GET", `/device?user_code=${login.user_code}`)
        expect(anonymous.status).toBe(200)
        expect(anonymous.headers["content-type"]).toContain("text/html")
        expect(anonymous.headers["content-security-policy"]).toContain("default-src 'none'")
        expect(anonymous.headers["x-frame-options"]).toBe("DENY")
        expect(anonymous.body).toContain("name=\"token\"")
        expect(anonymous.body).toContain(`value="${login.user_code}"`)

        const bad = yield* signIn("not-a-token", login.user_code)
        expect(bad.status).toBe(401)
        expect(bad.cookie.header).toBe("")

        const good = yield* signIn(team.tokens.admin, login.user_code)
        expect(good.cookie.header).toMatch(/^hosting_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/api\/v1; Max-Age=43200$/)
        expect(good.body).toContain("hosting-cli")
        expect(good.body).toContain(login.user_code)
        const loose = login.user_code.toLowerCase().replace("-", " ")
        const typed = yield* raw("GET", `/device?user_code=${encodeURIComponent(loose)}`, { headers: { cookie: good.cookie.pair } })
        expect(typed.body).toContain(`value="${login.user_code}"`)
        // HTML in what the page echoes is escaped.
        const hostile = yield* raw("GET", `/device?user_code=${encodeURIComponent("<b>x</b>")}`, { headers: { cookie: good.cookie.pair } })
        expect(hostile.body).not.toContain("<b>x</b>")
        expect(hostile.body).toContain("&lt;b&gt;")
      }))

    it.effect("a decision needs the session's CSRF value and the page's origin (403 otherwise) and changes nothing then", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const login = yield* startLogin
        const session = yield* signIn(team.tokens.member, login.user_code)
        const csrf = csrfOf(session.body)!
        const forged = yield* decide(session.cookie.pair, login.user_code, "approve", "0".repeat(64))
        expect(forged.status).toBe(403)
        const foreign = yield* decide(session.cookie.pair, login.user_code, "approve", csrf, { origin: "https://evil.example" })
        expect(foreign.status).toBe(403)
        const noSession = yield* decide("hosting_session=forged", login.user_code, "approve", csrf)
        expect(noSession.status).toBe(401)
        expectOAuthError(yield* poll(login.device_code), "authorization_pending")
        // Another user's session has another CSRF value.
        const other = yield* signIn(team.tokens.owner, login.user_code)
        expect(csrfOf(other.body)).not.toBe(csrf)
        expect((yield* decide(other.cookie.pair, login.user_code, "approve", csrf)).status).toBe(403)
      }))

    it.effect("revocation answers 200 for any token (RFC 7009); a revoked token is refused with 401", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        expect((yield* raw("GET", "/me", { token: team.tokens.member })).status).toBe(200)
        const revoked = yield* raw("POST", "/oauth/revoke", { form: { token: team.tokens.member, token_type_hint: "access_token" } })
        expect([revoked.status, revoked.body]).toEqual([200, {}])
        const after = yield* raw("GET", "/me", { token: team.tokens.member })
        expect(after.status).toBe(401)
        expectErrorBody(after.body, "unauthorized")
        expect((yield* raw("POST", "/oauth/revoke", { form: { token: team.tokens.member } })).status).toBe(200)
        expect((yield* raw("POST", "/oauth/revoke", { form: { token: "never-issued" } })).status).toBe(200)
      }))

    it.effect("revoking a token ends what was made from it: the browser sessions signed in with it and the device logins those approved", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        // A dashboard session and an approval-page session, both signed in with the member's token.
        const browser = yield* raw("POST", "/session", { json: { token: team.tokens.member } })
        const browserCookie = cookieOf(browser.headers).pair
        expect((yield* raw("GET", "/session", { headers: { cookie: browserCookie } })).status).toBe(200)
        const { login, session: page } = yield* approvedLogin(team.tokens.member)
        const token = yield* poll(login.device_code)
        expect(token.status).toBe(200)
        const device: string = token.body.access_token
        // A session signed in with the device's token: one step further down.
        const fromDevice = cookieOf((yield* raw("POST", "/session", { json: { token: device } })).headers).pair
        expect((yield* raw("GET", "/me", { token: device })).status).toBe(200)

        expect((yield* raw("POST", "/oauth/revoke", { form: { token: team.tokens.member } })).status).toBe(200)
        expect((yield* raw("GET", "/session", { headers: { cookie: browserCookie } })).status).toBe(401)
        expect((yield* raw("GET", "/me", { headers: { cookie: page } })).status).toBe(401)
        expect((yield* raw("GET", "/me", { token: device })).status).toBe(401)
        expect((yield* raw("GET", "/session", { headers: { cookie: fromDevice } })).status).toBe(401)
        // Only what came from it: another member's token is untouched.
        expect((yield* raw("GET", "/me", { token: team.tokens.owner })).status).toBe(200)
      }))

    it.effect("signing out of the session that approved a device login ends that login's token; a login approved by an ended session gives none", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const { csrf, login, session } = yield* approvedLogin(team.tokens.owner)
        const token = yield* poll(login.device_code)
        expect((yield* raw("GET", "/me", { token: token.body.access_token })).status).toBe(200)
        const signedOut = yield* raw("DELETE", "/session", { headers: { cookie: session, "x-csrf-token": csrf } })
        expect(signedOut.status).toBe(204)
        expect((yield* raw("GET", "/me", { token: token.body.access_token })).status).toBe(401)
        // Approved, then the session ends before the client polls: the client gets no token.
        const later = yield* approvedLogin(team.tokens.owner)
        expect((yield* raw("POST", "/oauth/revoke", { form: { token: later.session.split("=")[1]! } })).status).toBe(200)
        expectOAuthError(yield* poll(later.login.device_code), "invalid_grant")
        expect((yield* raw("GET", "/me", { token: team.tokens.owner })).status).toBe(200)
      }))

    it.effect("a login may ask for scopes: the page shows them, the token has them (within the approver's), an unknown scope is invalid_scope", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const unknown = yield* raw("POST", "/oauth/device/code", { form: { client_id: "hosting-cli", scope: "read root" } })
        expectOAuthError(unknown, "invalid_scope")
        const started = yield* raw("POST", "/oauth/device/code", { form: { client_id: "hosting-cli", scope: "read chat" } })
        expect(started.status).toBe(200)
        const page = yield* signIn(team.tokens.owner, started.body.user_code)
        expect(page.body).toContain("read chat")
        expect((yield* decide(page.cookie.pair, started.body.user_code, "approve", csrfOf(page.body)!)).status).toBe(200)
        yield* TestClock.adjust("16 seconds")
        const token = yield* poll(started.body.device_code)
        expect(token.status).toBe(200)
        expect(token.body.scope).toBe("read chat")
        expect((yield* raw("GET", "/me", { token: token.body.access_token })).status).toBe(200)
        const refused = yield* raw("PUT", `/accounts/${team.account}`, { token: token.body.access_token, json: { name: team.account } })
        expect(refused.status).toBe(403)
        expectErrorBody(refused.body, "insufficient_scope")
      }))
  })
})
