/**
 * Single sign-on through a real OpenID provider (`oidc-provider` on
 * loopback), the authorization code flow with PKCE as a browser runs it
 * (redirects, the provider's login and consent forms, cookies): the first
 * sign-in makes the user from the ID token's claims, a later one finds the
 * same user, a tampered or replayed answer starts no session, and the
 * methods route says what the sign-in page may offer.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Redacted, Effect } from "effect"
import { afterAll } from "vitest"
import { layer, port, raw } from "./HttpTestServer.js"
import * as OidcProvider from "./OidcProvider.js"

const provider = await OidcProvider.start({
  "ada": { sub: "ada", email: "ada@example.com", name: "Ada Lovelace", preferred_username: "ada" },
  "grace-id-42": { sub: "grace-id-42", email: "grace@example.com", name: "Grace Hopper" }
})
afterAll(() => provider.close())

const serverLayer = layer({
  oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: Redacted.make(provider.clientSecret) }
})

/** The server's base URL; registers the provider's client with its callback the first time. */
let registered = false
const baseUrl = Effect.map(port, (p) => {
  const base = `http://127.0.0.1:${p}/api/v1`
  if (!registered) provider.register(`${base}/oidc/callback`)
  registered = true
  return base
})

describe("HTTP: single sign-on through an OpenID provider", () => {
  withLayer(serverLayer, { excludeTestServices: true })((it) => {
    it.effect("the first sign-in makes the user from the claims and starts a session; the next finds the same user", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const methods = yield* raw("GET", "/session/methods", {})
        expect(methods.body).toEqual({ token: true, device: true, setup: true, oidc: { issuer: provider.issuer, login_url: `${base}/oidc/login` } })

        const jar = new OidcProvider.CookieJar()
        const start = yield* Effect.promise(() => OidcProvider.visit(jar, `${base}/oidc/login?next=${encodeURIComponent("/accounts")}`))
        expect(start.response.status).toBe(302)
        const authorize = new URL(start.response.headers.get("location")!)
        expect(authorize.origin).toBe(provider.issuer)
        expect(authorize.searchParams.get("code_challenge_method")).toBe("S256")
        expect(authorize.searchParams.get("redirect_uri")).toBe(`${base}/oidc/callback`)

        const done = yield* Effect.promise(() => OidcProvider.signInThrough(jar, `${base}/oidc/login?next=${encodeURIComponent("/accounts")}`, "ada"))
        expect(done.response.status).toBe(200)
        expect(done.text).toContain("Signed in as Ada Lovelace (ada)")
        expect(done.text).toContain(`<meta http-equiv="refresh" content="0;url=/accounts">`)
        const session = jar.get("hosting_session")
        expect(session).toBeDefined()
        const me = yield* raw("GET", "/session", { headers: { cookie: `hosting_session=${session}` } })
        expect(me.body.user).toEqual({ id: "ada", name: "Ada Lovelace" })

        // Again, in another browser: the same user.
        const again = new OidcProvider.CookieJar()
        yield* Effect.promise(() => OidcProvider.signInThrough(again, `${base}/oidc/login`, "ada"))
        const second = yield* raw("GET", "/session", { headers: { cookie: `hosting_session=${again.get("hosting_session")}` } })
        expect(second.body.user.id).toBe("ada")
        expect((yield* raw("GET", "/session/methods", {})).body.setup).toBe(false)
      }), 60_000)

    it.effect("a user id comes from the preferred username, else the email, and never takes another user's", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const jar = new OidcProvider.CookieJar()
        const done = yield* Effect.promise(() => OidcProvider.signInThrough(jar, `${base}/oidc/login`, "grace-id-42"))
        expect(done.text).toContain("Signed in as Grace Hopper (grace@example.com)")
      }), 60_000)

    it.effect("an answer that does not match the sign-in started here starts no session; next never leaves the server", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const jar = new OidcProvider.CookieJar()
        const started = yield* Effect.promise(() => OidcProvider.visit(jar, `${base}/oidc/login?next=${encodeURIComponent("https://evil.example/")}`))
        const state = new URL(started.response.headers.get("location")!).searchParams.get("state")!
        // A callback with a state of someone else's sign-in, and one with no sign-in started at all.
        const forged = yield* Effect.promise(() => OidcProvider.visit(jar, `${base}/oidc/callback?code=stolen&state=${state}x`))
        expect(forged.response.status).toBe(400)
        expect(forged.text).toContain("could not be verified")
        expect(jar.get("hosting_session")).toBeUndefined()
        const stranger = yield* Effect.promise(() => OidcProvider.visit(new OidcProvider.CookieJar(), `${base}/oidc/callback?code=x&state=y`))
        expect(stranger.response.status).toBe(400)
        expect(stranger.text).toContain("not started here")
        const refused = yield* Effect.promise(() => OidcProvider.visit(jar, `${base}/oidc/callback?error=access_denied&error_description=nope`))
        expect(refused.text).toContain("refused the sign-in")
        const done = yield* Effect.promise(() => OidcProvider.signInThrough(new OidcProvider.CookieJar(), `${base}/oidc/login?next=${encodeURIComponent("//evil.example/")}`, "ada"))
        expect(done.text).toContain(`content="0;url=/"`)
      }), 60_000)

    it.effect("the device approval page offers single sign-on and comes back to the code, signed in, to approve it", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const started = yield* raw("POST", "/oauth/device/code", { form: { client_id: "hosting-cli" } })
        const userCode = started.body.user_code as string
        const jar = new OidcProvider.CookieJar()
        const pageBefore = yield* Effect.promise(() => OidcProvider.visit(jar, `${base}/device?user_code=${userCode}`))
        const link = /href="(oidc\/login\?next=[^"]+)"/.exec(pageBefore.text)?.[1]
        expect(link, pageBefore.text).toBeDefined()
        const done = yield* Effect.promise(() => OidcProvider.signInThrough(jar, `${base}/${link}`, "ada"))
        expect(done.text).toContain(`url=/api/v1/device?user_code=${userCode}`)
        const pageAfter = yield* Effect.promise(() => OidcProvider.visit(jar, `${base}/device?user_code=${userCode}`))
        expect(pageAfter.text).toContain("Approve")
        expect(pageAfter.text).toContain(userCode)
      }), 60_000)
  })
})
