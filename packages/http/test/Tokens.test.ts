/**
 * Setting up an instance and personal access tokens over HTTP (issue 26):
 * the setup code spent once, tokens with scopes and accounts, their last
 * use, revocation, and the 403 `insufficient_scope` of a token used beyond
 * its scopes, on a real server on loopback.
 */
import { describe, expect, it } from "@effect/vitest"
import { Setup, Token } from "@hosting/core"
import { Seed, StorageSuite } from "@hosting/testing"
import { Effect, Option } from "effect"
import { expectErrorBody, layer, raw } from "./HttpTestServer.js"

/** Makes a personal access token with the caller's token; the whole answer. */
const makeToken = (token: string, body: Record<string, unknown>) =>
  Effect.map(raw("POST", "/tokens", { token, json: { name: "ci", ...body } }), (answer) => {
    expect(answer.status).toBe(201)
    return answer.body as {
      id: string
      token: string
      scopes: Array<string>
      accounts: Array<string> | null
      created_at: string
      expires_at: string
    }
  })

describe("HTTP: setting up an instance, and personal access tokens", () => {
  it.layer(layer())((it) => {
    // First: the storage is empty until a test seeds it.
    it.effect("the setup code makes the first user once: a wrong code is 403, the code spent is 409, and the token it gives works", () =>
      Effect.gen(function*() {
        const setup = yield* Setup.Setup
        const code = Option.getOrThrow(yield* setup.begin())
        expect(code).toMatch(/^[A-Z0-9]{5}(-[A-Z0-9]{5}){3}$/)
        const wrong = yield* raw("POST", "/setup", { json: { code: "AAAAA-BBBBB-CCCCC-DDDDD", user_id: "root" } })
        expect(wrong.status).toBe(403)
        expectErrorBody(wrong.body, "invalid_setup_code")
        const bad = yield* raw("POST", "/setup", { json: { code, user_id: "no spaces allowed" } })
        expect(bad.status).toBe(400)
        expectErrorBody(bad.body, "invalid_request")
        // Typed in lower case without the hyphens, the code still counts.
        const made = yield* raw("POST", "/setup", { json: { code: code.toLowerCase().replaceAll("-", " "), user_id: "root", name: "Root" } })
        expect(made.status).toBe(201)
        expect(made.body.user).toEqual({ id: "root", name: "Root", instance_admin: true })
        expect(Token.isWellFormed(made.body.token)).toBe(true)
        const me = yield* raw("GET", "/me", { token: made.body.token })
        expect(me.body).toEqual({ user: { id: "root", name: "Root" }, accounts: [] })
        const again = yield* raw("POST", "/setup", { json: { code, user_id: "root2" } })
        expect(again.status).toBe(409)
        expectErrorBody(again.body, "setup_done")
        // A later start finds a user: no new code.
        expect(Option.isNone(yield* setup.begin())).toBe(true)
        const listed = yield* raw("GET", "/tokens", { token: made.body.token })
        expect(listed.body.tokens).toMatchObject([
          { id: made.body.token_id, name: "setup", scopes: Token.allScopes, accounts: null, expires_at: null }
        ])
      }))

    // The tests below seed users of their own: the instance is set up by now.
    it.effect("a token is shown once, listed without its secret with its last use, and revoked; then it is refused", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const made = yield* makeToken(team.tokens.member, { scopes: ["read", "chat"], expires_in: 3600 })
        expect(Token.isWellFormed(made.token)).toBe(true)
        expect(made.scopes).toEqual(["read", "chat"])
        expect(made.accounts).toBeNull()
        expect(Date.parse(made.expires_at) - Date.parse(made.created_at)).toBe(3600_000)
        expect((yield* raw("GET", "/me", { token: made.token })).status).toBe(200)
        const listed = yield* raw("GET", "/tokens", { token: team.tokens.member })
        expect(JSON.stringify(listed.body)).not.toContain(made.token)
        const entry = listed.body.tokens.find((t: { id: string }) => t.id === made.id)
        expect(entry).toMatchObject({ name: "ci", scopes: ["read", "chat"] })
        expect(typeof entry.last_used_at).toBe("string")
        // Another user sees none of them, and cannot revoke them.
        expect((yield* raw("GET", "/tokens", { token: team.tokens.admin })).body.tokens).toEqual([])
        const foreign = yield* raw("DELETE", `/tokens/${made.id}`, { token: team.tokens.admin })
        expect(foreign.status).toBe(404)
        expectErrorBody(foreign.body, "token_not_found")
        const revoked = yield* raw("DELETE", `/tokens/${made.id}`, { token: team.tokens.member })
        expect(revoked.status).toBe(200)
        expect((yield* raw("GET", "/me", { token: made.token })).status).toBe(401)
        expect((yield* raw("DELETE", `/tokens/${made.id}`, { token: team.tokens.member })).status).toBe(404)
      }))

    it.effect("a token used beyond its scopes is 403 insufficient_scope naming the scope, and changes nothing", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const reader = yield* makeToken(team.tokens.owner, { scopes: ["read"] })
        expect((yield* raw("GET", `/accounts/${team.account}/members`, { token: reader.token })).status).toBe(200)
        const name = StorageSuite.uniqueName("renamed")
        const refused = yield* raw("PUT", `/accounts/${team.account}`, { token: reader.token, json: { name } })
        expect(refused.status).toBe(403)
        expectErrorBody(refused.body, "insufficient_scope")
        expect(refused.body.details).toContain("admin")
        const publish = yield* raw("POST", `/agents/${team.account}/helper/publish`, { token: reader.token, json: { build_id: "b-1", version: "1.0.0" } })
        expect(publish.status).toBe(403)
        expect(publish.body.details).toContain("publish")
        expect((yield* raw("GET", `/accounts/${team.account}`, { token: team.tokens.owner })).body.name).toBe(team.account)
        // A token cannot make a token that reaches further than itself.
        const admin = yield* makeToken(team.tokens.owner, { scopes: ["read", "admin"] })
        const wider = yield* raw("POST", "/tokens", { token: admin.token, json: { name: "wider", scopes: ["deploy"] } })
        expect(wider.status).toBe(400)
        expectErrorBody(wider.body, "invalid_request")
        expect(wider.body.details).toContain("deploy")
        const narrower = yield* makeToken(admin.token, { scopes: ["read"] })
        expect(narrower.scopes).toEqual(["read"])
      }))

    it.effect("a token limited to some accounts sees only those: /me lists them, and other accounts are refused", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const other = StorageSuite.uniqueName("second")
        expect((yield* raw("POST", "/accounts", { token: team.tokens.owner, json: { name: other } })).status).toBe(201)
        const limited = yield* makeToken(team.tokens.owner, { scopes: ["read"], accounts: [other] })
        expect(limited.accounts).toEqual([other])
        expect((yield* raw("GET", "/me", { token: limited.token })).body.accounts).toEqual([{ name: other, role: "owner" }])
        expect((yield* raw("GET", `/accounts/${other}`, { token: limited.token })).status).toBe(200)
        const outside = yield* raw("GET", `/accounts/${team.account}`, { token: limited.token })
        expect(outside.status).toBe(403)
        const notMine = yield* raw("POST", "/tokens", { token: team.tokens.member, json: { name: "x", scopes: ["read"], accounts: [other] } })
        expect(notMine.status).toBe(400)
        expectErrorBody(notMine.body, "invalid_request")
      }))

    it.effect("a browser session signed in with a limited token is as limited", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const reader = yield* makeToken(team.tokens.owner, { scopes: ["read"] })
        const signedIn = yield* raw("POST", "/session", { json: { token: reader.token } })
        expect(signedIn.status).toBe(200)
        const cookie = (signedIn.headers["set-cookie"] as unknown as Array<string> | string)
        const line = Array.isArray(cookie) ? cookie[0]! : cookie
        const headers = { cookie: line.split(";")[0]!, "x-csrf-token": signedIn.body.csrf }
        expect((yield* raw("GET", "/me", { headers })).status).toBe(200)
        const refused = yield* raw("POST", "/accounts", { headers, json: { name: StorageSuite.uniqueName("session") } })
        expect(refused.status).toBe(403)
        expectErrorBody(refused.body, "insufficient_scope")
      }))

    it.effect("bad token requests are 400 and make nothing: unknown scopes, no scopes, a lifetime past 366 days", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        for (const body of [{ scopes: ["root"] }, { scopes: [] }, { scopes: ["read"], expires_in: 400 * 86400 }, { scopes: ["read"], expires_in: 5 }, {
          name: "",
          scopes: ["read"]
        }]) {
          const answer = yield* raw("POST", "/tokens", { token: team.tokens.member, json: { name: "ci", ...body } })
          expect(answer.status, JSON.stringify(body)).toBe(400)
          expectErrorBody(answer.body, "invalid_request")
        }
        expect((yield* raw("GET", "/tokens", { token: team.tokens.member })).body.tokens).toEqual([])
      }))
  })
})
