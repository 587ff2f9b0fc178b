/**
 * The catalog and account routes over HTTP: each test names the rule of the
 * contract it checks, and calls a real server on loopback.
 */
import { describe, expect, it } from "@effect/vitest"
import { ApiErrors } from "@hosting/api"
import { Seed } from "@hosting/testing"
import { Effect } from "effect"
import { client, expectErrorBody, layer, raw, registerBody } from "./HttpTestServer.js"

const spec = "name: helper\ndescription: Helps people\n"


describe("HTTP: catalog and accounts", () => {
  it.layer(layer())((it) => {
    it.effect("POST /agents/{account}/{name}/register answers 201 with message, account, name, build_id, validation_warnings", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const api = yield* client(team.tokens.owner)
        const result = yield* api.agents.register({
          path: { account: team.account, name: "helper" as never },
          payload: { ...registerBody("b-1"), spec_content: `${spec}mystery: 1\n` } as never
        })
        expect(result).toMatchObject({ message: "Build registered", account: team.account, name: "helper", build_id: "b-1" })
        expect(result.validation_warnings.map((w) => w.code)).toEqual(["unknown_key"])
        const again = yield* raw("POST", `/agents/${team.account}/helper/register`, { token: team.tokens.owner, json: registerBody("b-1") })
        expect(again.status).toBe(201)
        expect(again.body).toMatchObject({ message: "Build updated", validation_warnings: [] })
      }))

    it.effect("register without the Authorization header is 401; with an unknown token 401; a malformed header 401", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const path = `/agents/${team.account}/helper/register`
        const none = yield* raw("POST", path, { json: registerBody("b-1") })
        expect(none.status).toBe(401)
        expectErrorBody(none.body, "unauthorized")
        const unknown = yield* raw("POST", path, { token: "not-a-token", json: registerBody("b-1") })
        expect(unknown.status).toBe(401)
        const basic = yield* raw("POST", path, { headers: { authorization: `Basic ${team.tokens.owner}` }, json: registerBody("b-1") })
        expect(basic.status).toBe(401)
      }))

    it.effect("register and publish need owner or admin: a member or a non-member gets 403", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        for (const who of ["member", "outsider"] as const) {
          const r = yield* raw("POST", `/agents/${team.account}/helper/register`, { token: team.tokens[who], json: registerBody("b-1") })
          expect(r.status).toBe(403)
          expectErrorBody(r.body, "forbidden")
        }
        yield* raw("POST", `/agents/${team.account}/helper/register`, { token: team.tokens.admin, json: registerBody("b-1") })
        const p = yield* raw("POST", `/agents/${team.account}/helper/publish`, {
          token: team.tokens.member,
          json: { build_id: "b-1", version: "1.0.0" }
        })
        expect(p.status).toBe(403)
      }))

    it.effect("register answers 400 for a missing field, a bad build id, a bad registry or a spec that is not YAML, and stores nothing", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const path = `/agents/${team.account}/helper/register`
        const bad: Array<[unknown, string]> = [
          [{ registry: "ghcr.io/acme", spec_content: spec }, "build_id"],
          [registerBody("has space"), "build_id"],
          [registerBody("b-1", { registry: "not a url" }), "registry"],
          [registerBody("b-1", { spec_content: 42 }), "spec_content"],
          [[], "request"]
        ]
        for (const [json, field] of bad) {
          const r = yield* raw("POST", path, { token: team.tokens.owner, json })
          expect(r.status).toBe(400)
          expectErrorBody(r.body, "invalid_request")
          expect(r.body.details).toContain(field)
        }
        const yaml = yield* raw("POST", path, { token: team.tokens.owner, json: registerBody("b-1", { spec_content: "a: [" }) })
        expect(yaml.status).toBe(400)
        expectErrorBody(yaml.body, "invalid_spec")
        const read = yield* raw("GET", `/agents/${team.account}/helper`, { token: team.tokens.owner })
        expect(read.status).toBe(404)
      }))

    it.effect("register into an unknown account is 404; a path that is not a slug is 400", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const missing = yield* raw("POST", "/agents/no-such-account/helper/register", { token: team.tokens.owner, json: registerBody("b-1") })
        expect(missing.status).toBe(404)
        expectErrorBody(missing.body, "account_not_found")
        const notSlug = yield* raw("POST", `/agents/${team.account}/Not_A_Slug/register`, { token: team.tokens.owner, json: registerBody("b-1") })
        expect(notSlug.status).toBe(400)
        expectErrorBody(notSlug.body, "invalid_request")
      }))

    it.effect("POST publish answers 201 with message, account, name, build_id, version and the build becomes public", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const api = yield* client(team.tokens.owner)
        yield* raw("POST", `/agents/${team.account}/helper/register`, { token: team.tokens.owner, json: registerBody("b-1") })
        const before = yield* raw("GET", `/agents/${team.account}/helper`)
        expect(before.status).toBe(404)
        const published = yield* api.agents.publish({
          path: { account: team.account, name: "helper" as never },
          payload: { build_id: "b-1" as never, version: "1.0.0" as never }
        })
        expect(published).toMatchObject({ account: team.account, name: "helper", build_id: "b-1", version: "1.0.0" })
        const anonymous = yield* client()
        const agent = yield* anonymous.publicAgents.get({ path: { account: team.account, name: "helper" as never } })
        expect(agent.versions.map((v) => v.version)).toEqual(["1.0.0"])
      }))

    it.effect("publish refuses a version that is not major.minor.patch with 400", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* raw("POST", `/agents/${team.account}/helper/register`, { token: team.tokens.owner, json: registerBody("b-1") })
        for (const version of ["1.0", "v1.0.0", "1.0.0-beta.1", "1.0.0+build", "01.0.0", "", 1]) {
          const r = yield* raw("POST", `/agents/${team.account}/helper/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version } })
          expect(r.status).toBe(400)
          expect(r.body.details).toContain("version")
        }
      }))

    it.effect("publish of a version another build holds is 400 version_already_published; the same again is idempotent", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const path = `/agents/${team.account}/helper`
        for (const b of ["b-1", "b-2"]) yield* raw("POST", `${path}/register`, { token: team.tokens.owner, json: registerBody(b) })
        const first = yield* raw("POST", `${path}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })
        expect(first.status).toBe(201)
        const same = yield* raw("POST", `${path}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })
        expect(same.status).toBe(201)
        const taken = yield* raw("POST", `${path}/publish`, { token: team.tokens.owner, json: { build_id: "b-2", version: "1.0.0" } })
        expect(taken.status).toBe(400)
        expectErrorBody(taken.body, "version_already_published")
      }))

    it.effect("publish of an unknown agent or build is 404", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const path = `/agents/${team.account}/helper`
        const noAgent = yield* raw("POST", `${path}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })
        expect(noAgent.status).toBe(404)
        expectErrorBody(noAgent.body, "agent_not_found")
        yield* raw("POST", `${path}/register`, { token: team.tokens.owner, json: registerBody("b-1") })
        const noBuild = yield* raw("POST", `${path}/publish`, { token: team.tokens.owner, json: { build_id: "zzz", version: "1.0.0" } })
        expect(noBuild.status).toBe(404)
        expectErrorBody(noBuild.body, "build_not_found")
      }))

    it.effect("GET /agents/{account}/{name}: public callers see only published versions; members see all builds", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const path = `/agents/${team.account}/helper`
        for (const b of ["b-1", "b-2"]) yield* raw("POST", `${path}/register`, { token: team.tokens.owner, json: registerBody(b) })
        yield* raw("POST", `${path}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "0.1.0" } })
        const pub = yield* raw("GET", path)
        expect(pub.status).toBe(200)
        expect(pub.body.versions.map((v: any) => v.build_id)).toEqual(["b-1"])
        expect(pub.body).toMatchObject({ account: team.account, name: "helper", registry: "ghcr.io/acme" })
        expect(pub.body.versions[0]).toMatchObject({ version: "0.1.0", readme: "# Helper", spec: { name: "helper" } })
        const member = yield* raw("GET", path, { token: team.tokens.member })
        expect(member.body.versions.map((v: any) => [v.build_id, v.version ?? null])).toEqual([["b-2", null], ["b-1", "0.1.0"]])
        const outsider = yield* raw("GET", path, { token: team.tokens.outsider })
        expect(outsider.body.versions).toHaveLength(1)
        const badToken = yield* raw("GET", path, { token: "expired-or-unknown" })
        expect(badToken.status).toBe(401)
      }))

    it.effect("GET /agents lists only agents with a published version, with search and paging", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        for (const name of ["alpha", "beta", "gamma"]) {
          yield* raw("POST", `/agents/${team.account}/${name}/register`, { token: team.tokens.owner, json: registerBody("b-1") })
        }
        for (const name of ["alpha", "beta"]) {
          yield* raw("POST", `/agents/${team.account}/${name}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })
        }
        const all = yield* raw("GET", `/agents?q=${team.account}`)
        expect(all.status).toBe(200)
        expect(all.body.total).toBe(2)
        expect(all.body.agents.map((a: any) => a.name).sort()).toEqual(["alpha", "beta"])
        expect(all.body.agents[0]).toMatchObject({ account: team.account, latest_version: "1.0.0", description: "Helps people" })
        const page = yield* raw("GET", `/agents?q=${team.account}&limit=1&offset=1`)
        expect([page.body.total, page.body.agents.length, page.body.limit, page.body.offset]).toEqual([2, 1, 1, 1])
        const searched = yield* raw("GET", `/agents?q=${team.account}/bet`)
        expect(searched.body.agents.map((a: any) => a.name)).toEqual(["beta"])
        for (const query of ["limit=0", "limit=201", "limit=abc", "offset=-1"]) {
          const bad = yield* raw("GET", `/agents?${query}`)
          expect(bad.status).toBe(400)
          expectErrorBody(bad.body, "invalid_request")
        }
      }))

    it.effect("GET config needs authentication and gives the latest build's image, spec and env", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const path = `/agents/${team.account}/helper`
        yield* raw("POST", `${path}/register`, {
          token: team.tokens.owner,
          json: registerBody("b-7", { spec_content: `${spec}image: ghcr.io/acme/helper:7\nenv:\n  MODE: fast\n` })
        })
        expect((yield* raw("GET", `${path}/config`)).status).toBe(401)
        const api = yield* client(team.tokens.member)
        const config = yield* api.agents.config({ path: { account: team.account, name: "helper" as never } })
        expect(config).toMatchObject({ build_id: "b-7", image: "ghcr.io/acme/helper:7", env: { MODE: "fast" }, registry: "ghcr.io/acme" })
        const other = yield* client(team.tokens.outsider)
        const error = yield* Effect.flip(other.agents.config({ path: { account: team.account, name: "helper" as never } }))
        expect(error).toBeInstanceOf(ApiErrors.NotFound)
      }))

    describe("accounts", () => {
    it.effect("GET /me needs a token (401) and gives the user and accounts with roles", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        expect((yield* raw("GET", "/me")).status).toBe(401)
        const me = yield* (yield* client(team.tokens.member)).accounts.me()
        expect(me.accounts).toEqual([{ name: team.account, role: "member" }])
        expect(me.user.id).toBe(team.principals.member.user.id)
      }))

    it.effect("PUT /accounts/{account} renames for owner or admin with 200 {message, name}", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const newName = `${team.account}-x`
        const forbidden = yield* raw("PUT", `/accounts/${team.account}`, { token: team.tokens.member, json: { name: newName } })
        expect(forbidden.status).toBe(403)
        const renamed = yield* raw("PUT", `/accounts/${team.account}`, { token: team.tokens.admin, json: { name: newName } })
        expect(renamed.status).toBe(200)
        expect(renamed.body).toMatchObject({ name: newName })
        expect(typeof renamed.body.message).toBe("string")
        const me = yield* raw("GET", "/me", { token: team.tokens.owner })
        expect(me.body.accounts).toEqual([{ name: newName, role: "owner" }])
        const gone = yield* raw("PUT", `/accounts/${team.account}`, { token: team.tokens.owner, json: { name: "whatever" } })
        expect(gone.status).toBe(404)
      }))

    it.effect("rename answers 400 for a name that is not a slug or is taken, 401 without a token", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const other = yield* Seed.team
        for (const name of ["Has Caps", "", "-lead", "a".repeat(64), 7]) {
          const r = yield* raw("PUT", `/accounts/${team.account}`, { token: team.tokens.owner, json: { name } })
          expect(r.status).toBe(400)
          expectErrorBody(r.body, "invalid_request")
        }
        const taken = yield* raw("PUT", `/accounts/${team.account}`, { token: team.tokens.owner, json: { name: other.account } })
        expect(taken.status).toBe(400)
        expectErrorBody(taken.body, "account_name_taken")
        expect((yield* raw("PUT", `/accounts/${team.account}`, { json: { name: "x" } })).status).toBe(401)
      }))

    it.effect("GET /accounts/{account} lists members for members and is 403 for others", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const view = yield* raw("GET", `/accounts/${team.account}`, { token: team.tokens.member })
        expect(view.status).toBe(200)
        expect(view.body.members).toHaveLength(3)
        expect((yield* raw("GET", `/accounts/${team.account}`, { token: team.tokens.outsider })).status).toBe(403)
      }))
    })
  })
})
