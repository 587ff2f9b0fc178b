/**
 * Accounts and members over HTTP (issue 26): the answers and error bodies a
 * client relies on, on a real server on loopback.
 */
import { describe, expect, it } from "@effect/vitest"
import { Seed, StorageSuite } from "@hosting/testing"
import { Effect, TestClock } from "effect"
import { client, expectErrorBody, layer, raw, registerBody } from "./HttpTestServer.js"

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

    it.effect("invitations: a one-time code and link; the invitee joins with the role; spent, withdrawn or expired codes are 404", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const made = yield* raw("POST", `/accounts/${team.account}/invitations`, {
          token: team.tokens.owner,
          json: { role: "admin", email: "new@example.com" }
        })
        expect(made.status).toBe(201)
        expect(made.body).toMatchObject({ account: team.account, role: "admin", email: "new@example.com", created_by: team.principals.owner.user.id })
        expect(made.body.code).toMatch(/^hsi_[0-9A-Za-z]{38}$/)
        expect(made.body.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/invitations/${made.body.code}$`))
        expect(Date.parse(made.body.expires_at) - Date.parse(made.body.created_at)).toBe(7 * 86_400_000)
        const listed = yield* raw("GET", `/accounts/${team.account}/invitations`, { token: team.tokens.admin })
        expect(listed.body.invitations.map((i: { id: string }) => i.id)).toContain(made.body.id)
        expect(JSON.stringify(listed.body)).not.toContain(made.body.code)
        // A member of the account already is refused, and the invitation stays for its invitee.
        const member = yield* raw("POST", `/invitations/${made.body.code}/accept`, { token: team.tokens.member })
        expect(member.status).toBe(409)
        expectErrorBody(member.body, "already_member")
        const joined = yield* raw("POST", `/invitations/${made.body.code}/accept`, { token: team.tokens.outsider })
        expect(joined.status).toBe(200)
        expect(joined.body).toMatchObject({ account: team.account, role: "admin" })
        expect((yield* raw("GET", "/me", { token: team.tokens.outsider })).body.accounts).toContainEqual({ name: team.account, role: "admin" })
        const spent = yield* raw("POST", `/invitations/${made.body.code}/accept`, { token: team.tokens.outsider })
        expect(spent.status).toBe(404)
        expectErrorBody(spent.body, "invitation_not_found")
        expect((yield* raw("GET", `/accounts/${team.account}/invitations`, { token: team.tokens.owner })).body.invitations
          .map((i: { id: string }) => i.id)).not.toContain(made.body.id)
      }))

    it.effect("invitations: admins invite members only, members not at all; withdrawn and expired codes cannot be used", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const asAdmin = yield* raw("POST", `/accounts/${team.account}/invitations`, { token: team.tokens.admin, json: { role: "owner" } })
        expect(asAdmin.status).toBe(403)
        expectErrorBody(asAdmin.body, "forbidden")
        const asMember = yield* raw("POST", `/accounts/${team.account}/invitations`, { token: team.tokens.member, json: { role: "member" } })
        expect(asMember.status).toBe(403)
        expect((yield* raw("GET", `/accounts/${team.account}/invitations`, { token: team.tokens.member })).status).toBe(403)
        const withdrawn = yield* raw("POST", `/accounts/${team.account}/invitations`, { token: team.tokens.admin, json: { role: "member" } })
        expect(withdrawn.status).toBe(201)
        expect((yield* raw("DELETE", `/accounts/${team.account}/invitations/${withdrawn.body.id}`, { token: team.tokens.owner })).status).toBe(200)
        expect((yield* raw("POST", `/invitations/${withdrawn.body.code}/accept`, { token: team.tokens.outsider })).status).toBe(404)
        const again = yield* raw("DELETE", `/accounts/${team.account}/invitations/${withdrawn.body.id}`, { token: team.tokens.owner })
        expect(again.status).toBe(404)
        expectErrorBody(again.body, "invitation_not_found")
        const expiring = yield* raw("POST", `/accounts/${team.account}/invitations`, { token: team.tokens.owner, json: { role: "member" } })
        yield* TestClock.adjust("8 days")
        expect((yield* raw("POST", `/invitations/${expiring.body.code}/accept`, { token: team.tokens.outsider })).status).toBe(404)
        expect((yield* raw("GET", `/accounts/${team.account}/invitations`, { token: team.tokens.owner })).body.invitations).toEqual([])
        expect((yield* raw("GET", "/me", { token: team.tokens.outsider })).body.accounts.map((a: { name: string }) => a.name))
          .not.toContain(team.account)
      }))

    it.effect("the audit log: who did what and when, newest first, paged; owners and admins only", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const name = StorageSuite.uniqueName("audited")
        expect((yield* raw("POST", "/accounts", { token: team.tokens.owner, json: { name } })).status).toBe(201)
        const other = team.principals.member.user.id
        expect((yield* raw("PUT", `/accounts/${name}/members/${other}`, { token: team.tokens.owner, json: { role: "member" } })).status).toBe(200)
        expect((yield* raw("PUT", `/accounts/${name}/members/${other}`, { token: team.tokens.owner, json: { role: "admin" } })).status).toBe(200)
        const invited = yield* raw("POST", `/accounts/${name}/invitations`, { token: team.tokens.member, json: { role: "member", email: "x@example.com" } })
        expect(invited.status).toBe(201)
        expect((yield* raw("POST", "/tokens", { token: team.tokens.owner, json: { name: "deploy-bot", scopes: ["read"], accounts: [name] } })).status)
          .toBe(201)
        expect((yield* raw("DELETE", `/accounts/${name}/members/${other}`, { token: team.tokens.member })).status).toBe(200)
        const log = yield* raw("GET", `/accounts/${name}/audit`, { token: team.tokens.owner })
        expect(log.status).toBe(200)
        expect(log.body.entries.map((e: { action: string; actor: string; target: string }) => [e.action, e.actor, e.target])).toEqual([
          ["member.removed", other, other],
          ["token.created", team.principals.owner.user.id, "deploy-bot"],
          ["invitation.created", other, "x@example.com"],
          ["member.role_changed", team.principals.owner.user.id, other],
          ["member.added", team.principals.owner.user.id, other],
          ["account.created", team.principals.owner.user.id, name]
        ])
        expect(log.body).toMatchObject({ total: 6, limit: 50, offset: 0 })
        expect(log.body.entries[0].details).toContain("left")
        const page = yield* raw("GET", `/accounts/${name}/audit?limit=2&offset=1`, { token: team.tokens.owner })
        expect(page.body.entries.map((e: { action: string }) => e.action)).toEqual(["token.created", "invitation.created"])
        // The member left: no longer a manager of the account, so refused.
        expect((yield* raw("GET", `/accounts/${name}/audit`, { token: team.tokens.member })).status).toBe(403)
        const bad = yield* raw("GET", `/accounts/${name}/audit?limit=0`, { token: team.tokens.owner })
        expect(bad.status).toBe(400)
        expectErrorBody(bad.body, "invalid_request")
        // A token of the whole user is written to each of the user's accounts.
        expect((yield* raw("POST", "/tokens", { token: team.tokens.owner, json: { name: "laptop", scopes: ["read"] } })).status).toBe(201)
        const team_log = yield* raw("GET", `/accounts/${team.account}/audit?limit=1`, { token: team.tokens.owner })
        expect(team_log.body.entries[0]).toMatchObject({ action: "token.created", target: "laptop" })
      }))

    it.effect("DELETE /accounts/{account}: owners only, refused while a deployment of it runs, then everything of it is gone", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const register = yield* raw("POST", `/agents/${team.account}/helper/register`, {
          token: team.tokens.owner,
          json: registerBody("b-1")
        })
        expect(register.status).toBe(201)
        expect((yield* raw("POST", `/agents/${team.account}/helper/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })).status)
          .toBe(201)
        const deployed = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.owner, json: {} })
        expect(deployed.status).toBe(201)
        const asAdmin = yield* raw("DELETE", `/accounts/${team.account}`, { token: team.tokens.admin })
        expect(asAdmin.status).toBe(403)
        const busy = yield* raw("DELETE", `/accounts/${team.account}`, { token: team.tokens.owner })
        expect(busy.status).toBe(409)
        expectErrorBody(busy.body, "account_busy")
        expect(busy.body.details).toContain(deployed.body.id)
        expect((yield* raw("GET", `/agents/${team.account}/helper`, {})).status).toBe(200)
        expect((yield* raw("DELETE", `/deployments/${deployed.body.id}`, { token: team.tokens.owner })).status).toBe(200)
        const deleted = yield* raw("DELETE", `/accounts/${team.account}`, { token: team.tokens.owner })
        expect(deleted.status).toBe(200)
        expect(deleted.body.name).toBe(team.account)
        expect((yield* raw("GET", `/accounts/${team.account}`, { token: team.tokens.owner })).status).toBe(404)
        expect((yield* raw("GET", `/agents/${team.account}/helper`, {})).status).toBe(404)
        expect((yield* raw("GET", `/deployments/${deployed.body.id}`, { token: team.tokens.owner })).status).toBe(404)
        expect((yield* raw("GET", "/me", { token: team.tokens.member })).body.accounts).toEqual([])
        // The name is free again.
        expect((yield* raw("POST", "/accounts", { token: team.tokens.member, json: { name: team.account } })).status).toBe(201)
      }))
  })
})
