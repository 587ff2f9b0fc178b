/**
 * Secrets of an account and the env of a deployment over HTTP, on the fake
 * cluster (issue 28): values are written, never answered; members list
 * names, owners and admins write, anyone else finds no account; a deploy
 * reads the deploying account's secrets into a Kubernetes Secret the workload
 * refers to, and a missing one stops it before the cluster is touched.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cluster, Ports } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { Effect, Option, Redacted } from "effect"
import { expectErrorBody, layer, raw, registerBody } from "./HttpTestServer.js"

const secretsOf = (team: Seed.Team, account = team.account) => `/accounts/${account}/secrets`

/** Every answer and stored thing a value could leak into, as text. */
const everythingVisible = (team: Seed.Team) =>
  Effect.gen(function*() {
    const accounts = yield* Ports.AccountStore
    const log = yield* Ports.EventLog
    const account = Option.getOrThrow(yield* accounts.findByName(team.account))
    const events = yield* log.after(account.id, Option.none(), 1000)
    const audit = yield* raw("GET", `/accounts/${team.account}/audit?limit=100`, { token: team.tokens.owner })
    const list = yield* raw("GET", secretsOf(team), { token: team.tokens.owner })
    return JSON.stringify([events, audit.body, list.body])
  })

const registerWith = (team: Seed.Team, spec: string, build = "b-1") =>
  Effect.gen(function*() {
    const r = yield* raw("POST", `/agents/${team.account}/helper/register`, { token: team.tokens.owner, json: registerBody(build, { spec_content: spec }) })
    expect(r.status).toBe(201)
    const p = yield* raw("POST", `/agents/${team.account}/helper/publish`, { token: team.tokens.owner, json: { build_id: build, version: `1.0.${build.slice(2)}` } })
    expect(p.status).toBe(201)
    return r.body
  })

const readSecret = (namespace: string) =>
  Effect.flatMap(Cluster.Cluster, (cluster) => cluster.readSecret(namespace, "helper-secrets")).pipe(
    Effect.map(Option.map((s) => Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, Redacted.value(v)]))))
  )

describe("HTTP: secrets", () => {
  it.layer(layer())((it) => {
    it.effect("owners and admins set a secret (created, then replaced); members list names and times; no answer holds a value", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const value = `sk-${globalThis.crypto.randomUUID()}`
        const created = yield* raw("PUT", `${secretsOf(team)}/OPENAI_KEY`, { token: team.tokens.owner, json: { value } })
        expect(created.status).toBe(200)
        expect(created.body).toMatchObject({ name: "OPENAI_KEY", created: true })
        expect(Date.parse(created.body.updated_at)).not.toBeNaN()
        const replaced = yield* raw("PUT", `${secretsOf(team)}/OPENAI_KEY`, { token: team.tokens.admin, json: { value: `${value}-2` } })
        expect([replaced.status, replaced.body.created]).toEqual([200, false])
        const multiline = yield* raw("PUT", `${secretsOf(team)}/A_PEM`, { token: team.tokens.owner, json: { value: "-----BEGIN\nline ✓\n-----END" } })
        expect(multiline.status).toBe(200)

        const listed = yield* raw("GET", secretsOf(team), { token: team.tokens.member })
        expect(listed.status).toBe(200)
        expect(listed.body.secrets.map((s: any) => s.name)).toEqual(["A_PEM", "OPENAI_KEY"])
        expect(Object.keys(listed.body.secrets[1]).sort()).toEqual(["created_at", "name", "updated_at"])
        const visible = yield* everythingVisible(team)
        expect(visible).toContain("OPENAI_KEY")
        expect(visible).not.toContain(value)
        expect(JSON.stringify([created.body, replaced.body])).not.toContain(value)
        const audit = (yield* raw("GET", `/accounts/${team.account}/audit`, { token: team.tokens.owner })).body.entries
        expect(audit.filter((e: any) => e.action === "secret.set").map((e: any) => e.target)).toEqual(["A_PEM", "OPENAI_KEY", "OPENAI_KEY"])
      }))

    it.effect("members may list but not write; anyone outside the account finds no account (404); without a credential 401", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* raw("PUT", `${secretsOf(team)}/KEPT`, { token: team.tokens.owner, json: { value: "v" } })
        const put = yield* raw("PUT", `${secretsOf(team)}/KEPT`, { token: team.tokens.member, json: { value: "changed" } })
        expect(put.status).toBe(403)
        expectErrorBody(put.body, "forbidden")
        expect((yield* raw("DELETE", `${secretsOf(team)}/KEPT`, { token: team.tokens.member })).status).toBe(403)
        for (const [method, body] of [["GET", undefined], ["PUT", { value: "x" }], ["DELETE", undefined]] as const) {
          const path = method === "GET" ? secretsOf(team) : `${secretsOf(team)}/KEPT`
          const outsider = yield* raw(method, path, { token: team.tokens.outsider, ...(body === undefined ? {} : { json: body }) })
          expect([method, outsider.status]).toEqual([method, 404])
          expectErrorBody(outsider.body, "account_not_found")
          // The same answer as for an account that does not exist.
          const nowhere = yield* raw(method, path.replace(team.account, `${team.account}-nowhere`), {
            token: team.tokens.outsider,
            ...(body === undefined ? {} : { json: body })
          })
          expect([nowhere.status, nowhere.body.error]).toEqual([404, "account_not_found"])
          expect((yield* raw(method, path, body === undefined ? {} : { json: body })).status).toBe(401)
        }
        const accounts = yield* Ports.AccountStore
        const account = Option.getOrThrow(yield* accounts.findByName(team.account))
        const [kept] = yield* accounts.secretValues(account.id, (yield* accounts.secretsOf(account.id)).map((s) => s.name)).pipe(
          Effect.map((values) => [...values.values()].map(Redacted.value))
        )
        expect(kept).toBe("v")
      }))

    it.effect("bad names and values are 400 { error, details } and change nothing; deleting is once, then 404 secret_not_found", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* raw("PUT", `${secretsOf(team)}/API_KEY`, { token: team.tokens.owner, json: { value: "original" } })
        const before = yield* everythingVisible(team)
        for (const name of ["api_key", "1KEY", "A-B", "%2E%2E", "KEY%00"]) {
          const r = yield* raw("PUT", `${secretsOf(team)}/${name}`, { token: team.tokens.owner, json: { value: "x" } })
          expect([name, r.status]).toEqual([name, 400])
          expectErrorBody(r.body, "invalid_request")
        }
        // A path segment longer than the name can be is no route at all (as on every route).
        const long = yield* raw("PUT", `${secretsOf(team)}/${"A".repeat(129)}`, { token: team.tokens.owner, json: { value: "x" } })
        expect([long.status, long.body.error]).toEqual([404, "not_found"])
        const values: ReadonlyArray<unknown> = ["", "a\u0000b", "x".repeat(64 * 1024 + 1), "é".repeat(32 * 1024 + 1), 5, null, ["x"], { v: 1 }]
        for (const value of values) {
          const r = yield* raw("PUT", `${secretsOf(team)}/API_KEY`, { token: team.tokens.owner, json: { value } })
          expect(r.status).toBe(400)
          expectErrorBody(r.body, "invalid_request")
          expect(r.body.details).toContain("value")
        }
        expect((yield* raw("PUT", `${secretsOf(team)}/API_KEY`, { token: team.tokens.owner, json: {} })).status).toBe(400)
        expect(yield* everythingVisible(team)).toEqual(before)
        // The largest value is taken.
        expect((yield* raw("PUT", `${secretsOf(team)}/BIG`, { token: team.tokens.owner, json: { value: "x".repeat(64 * 1024) } })).status).toBe(200)
        yield* raw("DELETE", `${secretsOf(team)}/BIG`, { token: team.tokens.owner })

        const deleted = yield* raw("DELETE", `${secretsOf(team)}/API_KEY`, { token: team.tokens.admin })
        expect([deleted.status, deleted.body.name]).toEqual([200, "API_KEY"])
        const again = yield* raw("DELETE", `${secretsOf(team)}/API_KEY`, { token: team.tokens.admin })
        expect(again.status).toBe(404)
        expectErrorBody(again.body, "secret_not_found")
        expect((yield* raw("GET", secretsOf(team), { token: team.tokens.member })).body.secrets).toEqual([])
      }))

    it.effect("a deploy reads the deploying account's secrets into a Kubernetes Secret the workload refers to; the ConfigMap, the record and the answers hold no value", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const openai = `sk-${globalThis.crypto.randomUUID()}`
        const github = `ghp-${globalThis.crypto.randomUUID()}`
        yield* registerWith(team, "name: helper\ndescription: d\nport: 8080\nenv:\n  MODE: fast\n  OPENAI_API_KEY: { secret: OPENAI_KEY }\n")
        const body = { env: { MODE: "slow", GH_TOKEN: { secret: "GITHUB_TOKEN" }, EXTRA: "1" } }

        // Neither secret is set: 409 naming both, and nothing reaches the cluster or the records.
        const missing = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.owner, json: body })
        expect(missing.status).toBe(409)
        expectErrorBody(missing.body, "secret_missing")
        expect(missing.body.details).toContain("GITHUB_TOKEN, OPENAI_KEY")
        const cluster = yield* Cluster.Cluster
        const namespace = `${team.account}-helper`
        expect(Option.isNone(yield* cluster.readWorkload(namespace, "helper"))).toBe(true)
        expect(Option.isNone(yield* cluster.readConfigMap(namespace, "helper-config"))).toBe(true)
        expect(Option.isNone(yield* readSecret(namespace))).toBe(true)
        expect((yield* raw("GET", `/agents/${team.account}/helper/deployment/history`, { token: team.tokens.owner })).body.count).toBe(0)

        yield* raw("PUT", `${secretsOf(team)}/OPENAI_KEY`, { token: team.tokens.owner, json: { value: openai } })
        const oneMissing = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.owner, json: body })
        expect([oneMissing.status, oneMissing.body.details.includes("OPENAI_KEY")]).toEqual([409, false])
        yield* raw("PUT", `${secretsOf(team)}/GITHUB_TOKEN`, { token: team.tokens.owner, json: { value: github } })
        const deployed = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.admin, json: body })
        expect(deployed.status).toBe(201)
        expect(deployed.body.env).toEqual(body.env)

        // The Secret holds the values under the env names; the workload refers to it; the plain env is as before.
        expect(yield* readSecret(namespace)).toEqual(Option.some({ OPENAI_API_KEY: openai, GH_TOKEN: github }))
        const workload = Option.getOrThrow(yield* cluster.readWorkload(namespace, "helper"))
        expect(workload.env).toEqual({ MODE: "slow", EXTRA: "1" })
        expect(workload.secretEnv).toEqual({
          OPENAI_API_KEY: { name: "helper-secrets", key: "OPENAI_API_KEY" },
          GH_TOKEN: { name: "helper-secrets", key: "GH_TOKEN" }
        })
        const configMap = Option.getOrThrow(yield* cluster.readConfigMap(namespace, "helper-config"))
        expect(configMap.data).toMatchObject({ MODE: "slow", EXTRA: "1" })
        expect(Object.keys(configMap.data)).not.toContain("OPENAI_API_KEY")
        const answers = [
          deployed.body,
          (yield* raw("GET", `/deployments/${deployed.body.id}`, { token: team.tokens.member })).body,
          (yield* raw("GET", `/agents/${team.account}/helper/deployment/history`, { token: team.tokens.member })).body,
          (yield* raw("GET", `/deployments/${namespace}/configmap/helper-config?account=${team.account}`, { token: team.tokens.member })).body,
          yield* everythingVisible(team)
        ]
        for (const text of [JSON.stringify(answers), JSON.stringify(configMap)]) {
          expect(text).not.toContain(openai)
          expect(text).not.toContain(github)
        }
        // Members of the deploying account see what the deploy set (references, not values).
        expect((yield* raw("GET", `/deployments/${deployed.body.id}`, { token: team.tokens.member })).body.env).toEqual(body.env)
        const audit = (yield* raw("GET", `/accounts/${team.account}/audit`, { token: team.tokens.owner })).body.entries
        expect(audit[0].details).toContain("Env set by the deploy: EXTRA, GH_TOKEN, MODE.")

        // Changing a secret changes no running deployment; a redeploy takes the new value.
        yield* raw("PUT", `${secretsOf(team)}/OPENAI_KEY`, { token: team.tokens.owner, json: { value: `${openai}-new` } })
        expect(yield* readSecret(namespace)).toEqual(Option.some({ OPENAI_API_KEY: openai, GH_TOKEN: github }))
        const redeployed = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.owner, json: body })
        expect(redeployed.status).toBe(201)
        expect(yield* readSecret(namespace)).toEqual(Option.some({ OPENAI_API_KEY: `${openai}-new`, GH_TOKEN: github }))

        // A deploy that refers to no secret leaves none of an earlier deploy in the namespace.
        yield* registerWith(team, "name: helper\ndescription: d\nport: 8080\nenv:\n  MODE: fast\n", "b-2")
        const plain = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.owner, json: { build_id: "b-2" } })
        expect([plain.status, plain.body.env]).toEqual([201, undefined])
        expect(Option.isNone(yield* readSecret(namespace))).toBe(true)
        expect(Option.getOrThrow(yield* cluster.readWorkload(namespace, "helper")).secretEnv).toEqual({})

        // A rollback returns to the build with the env it was deployed with, reading the secrets as they are now.
        const back = yield* raw("POST", `/deployments/${plain.body.id}/rollback`, { token: team.tokens.owner, json: {} })
        expect([back.status, back.body.build_id, back.body.env]).toEqual([201, "b-1", body.env])
        expect(yield* readSecret(namespace)).toEqual(Option.some({ OPENAI_API_KEY: `${openai}-new`, GH_TOKEN: github }))
      }))

    it.effect("another account deploying the agent reads its own secrets; the env a deploy sets is checked (400) before anything else", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* registerWith(team, "name: helper\ndescription: d\nenv:\n  OPENAI_API_KEY: { secret: OPENAI_KEY }\n")
        const elsewhere = team.principals.outsider.memberships[0]!.account
        // The publisher's secret is not the deployer's.
        yield* raw("PUT", `${secretsOf(team)}/OPENAI_KEY`, { token: team.tokens.owner, json: { value: "publisher-value" } })
        const missing = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.outsider, json: { into: elsewhere } })
        expect(missing.status).toBe(409)
        expect(missing.body.details).toContain(`Account ${elsewhere} has no secret named OPENAI_KEY`)
        yield* raw("PUT", `${secretsOf(team, elsewhere)}/OPENAI_KEY`, { token: team.tokens.outsider, json: { value: "deployer-value" } })
        const deployed = yield* raw("POST", `/agents/${team.account}/helper/deployments`, {
          token: team.tokens.outsider,
          json: { into: elsewhere, env: { MODE: "mine" } }
        })
        expect(deployed.status).toBe(201)
        // The spec's env is the publisher's (names only); the deploy's own env is the deployer's (values shown).
        expect([deployed.body.spec.env, deployed.body.env]).toEqual([{ OPENAI_API_KEY: "(hidden)" }, { MODE: "mine" }])
        expect(yield* readSecret(deployed.body.namespace)).toEqual(Option.some({ OPENAI_API_KEY: "deployer-value" }))

        for (const env of [
          { "BAD-NAME": "x" },
          { "1X": "x" },
          { A: { secret: "lower" } },
          { A: { secret: "OK", other: 1 } },
          { A: 5 },
          { A: "x".repeat(32 * 1024 + 1) },
          { A: "a\u0000b" },
          Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`V${i}`, "x"]))
        ]) {
          const r = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.owner, json: { env } })
          expect(r.status).toBe(400)
          expectErrorBody(r.body, "invalid_request")
        }
        expect((yield* raw("GET", `/agents/${team.account}/helper/deployment/history`, { token: team.tokens.owner })).body.count).toBe(0)
      }))
  })
})
