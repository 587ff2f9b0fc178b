/**
 * Accounts and members over HTTP (issue 26): the answers and error bodies a
 * client relies on, on a real server on loopback.
 */
import { describe, expect, it } from "@effect/vitest"
import { Seed, StorageSuite } from "@hosting/testing"
import { Effect } from "effect"
import { client, expectErrorBody, layer, raw } from "./HttpTestServer.js"

describe("HTTP: accounts and members", () => {
  it.layer(layer())((it) => {
    it.effect("POST /accounts answers 201 with the account and the role owner; a taken name is 409 account_name_taken", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const name = StorageSuite.uniqueName("made")
        const created = yield* raw("POST", "/accounts", { token: team.tokens.member, json: { name } })
        expect(created.status).toBe(201)
        expect(created.body).toMatchObject({ name, role: "owner" })
        expect(typeof created.body.created_at).toBe("string")
        const taken = yield* raw("POST", "/accounts", { token: team.tokens.outsider, json: { name } })
        expect(taken.status).toBe(409)
        expectErrorBody(taken.body, "account_name_taken")
        const api = yield* client(team.tokens.member)
        expect((yield* api.accounts.me()).accounts).toContainEqual({ name, role: "owner" })
      }))

    it.effect("POST /accounts with a name that breaks the slug rules is 400 and creates nothing", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        for (const name of ["Not A Slug", "", "-leading", 42]) {
          const bad = yield* raw("POST", "/accounts", { token: team.tokens.member, json: { name } })
          expect(bad.status).toBe(400)
          expectErrorBody(bad.body, "invalid_request")
        }
        const me = yield* raw("GET", "/me", { token: team.tokens.member })
        expect(me.body.accounts).toEqual([{ name: team.account, role: "member" }])
      }))

    it.effect("GET /accounts/{account}/members lists every member with their role; outsiders get 403", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const listed = yield* raw("GET", `/accounts/${team.account}/members`, { token: team.tokens.member })
        expect(listed.status).toBe(200)
        expect(listed.body.members.map((m: { role: string }) => m.role).sort()).toEqual(["admin", "member", "owner"])
        const outsider = yield* raw("GET", `/accounts/${team.account}/members`, { token: team.tokens.outsider })
        expect(outsider.status).toBe(403)
        expectErrorBody(outsider.body, "forbidden")
      }))

    it.effect("PUT /accounts/{account}/members/{user} adds or changes a role; the last owner is 409 last_owner", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const outsider = team.principals.outsider.user.id
        const added = yield* raw("PUT", `/accounts/${team.account}/members/${outsider}`, { token: team.tokens.owner, json: { role: "admin" } })
        expect(added.status).toBe(200)
        expect(added.body).toEqual({ user_id: outsider, name: "The outsider", role: "admin", added: true })
        const last = yield* raw("PUT", `/accounts/${team.account}/members/${team.principals.owner.user.id}`, {
          token: team.tokens.owner,
          json: { role: "member" }
        })
        expect(last.status).toBe(409)
        expectErrorBody(last.body, "last_owner")
        const unknown = yield* raw("PUT", `/accounts/${team.account}/members/nobody-here`, { token: team.tokens.owner, json: { role: "member" } })
        expect(unknown.status).toBe(404)
        expectErrorBody(unknown.body, "user_not_found")
        const badRole = yield* raw("PUT", `/accounts/${team.account}/members/${outsider}`, { token: team.tokens.owner, json: { role: "king" } })
        expect(badRole.status).toBe(400)
        const byAdmin = yield* raw("PUT", `/accounts/${team.account}/members/${team.principals.member.user.id}`, {
          token: team.tokens.admin,
          json: { role: "admin" }
        })
        expect(byAdmin.status).toBe(403)
        expect(byAdmin.body.details).toContain("needs the role owner")
      }))

    it.effect("DELETE /accounts/{account}/members/{user}: a member leaves; a second time is 404 member_not_found; the last owner is 409", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const member = team.principals.member.user.id
        const left = yield* raw("DELETE", `/accounts/${team.account}/members/${member}`, { token: team.tokens.member })
        expect(left.status).toBe(200)
        expect(left.body.user_id).toBe(member)
        const again = yield* raw("DELETE", `/accounts/${team.account}/members/${member}`, { token: team.tokens.owner })
        expect(again.status).toBe(404)
        expectErrorBody(again.body, "member_not_found")
        const gone = yield* raw("GET", `/accounts/${team.account}`, { token: team.tokens.member })
        expect(gone.status).toBe(403)
        const last = yield* raw("DELETE", `/accounts/${team.account}/members/${team.principals.owner.user.id}`, { token: team.tokens.owner })
        expect(last.status).toBe(409)
        expectErrorBody(last.body, "last_owner")
      }))
  })
})
