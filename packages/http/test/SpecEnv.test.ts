/**
 * The values under a spec's `env` reach only the members of the agent's
 * account (docs/agent-spec.md): every other reader of the spec (the
 * anonymous read, routed, cached or answered before routing; other accounts'
 * reads, config, deployments and ConfigMaps) sees the names alone, and
 * registering a value that looks like a credential is a validation warning.
 */
import { describe, expect, it } from "@effect/vitest"
import { Seed } from "@hosting/testing"
import { Effect } from "effect"
import { layer, raw, registerBody } from "./HttpTestServer.js"

const key = "sk-proj-Tq3vX9mR2bL7wK4nP8sD1fG6hJ0aZ5cY"
const specWithEnv = `name: helper\ndescription: Helps people\nenv:\n  OPENAI_API_KEY: ${key}\n  MODE: fast\n`
const hidden = { OPENAI_API_KEY: "(hidden)", MODE: "(hidden)" }

describe("HTTP: env values of a spec", () => {
  it.layer(layer())((it) => {
    it.effect("a credential in env is a validation warning, and only members read env values; everyone else reads the names", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const base = `/agents/${team.account}/helper`
        const registered = yield* raw("POST", `${base}/register`, { token: team.tokens.owner, json: registerBody("b-1", { spec_content: specWithEnv }) })
        expect(registered.status).toBe(201)
        const warning = registered.body.validation_warnings.find((w: any) => w.path === "env.OPENAI_API_KEY")
        expect(warning).toMatchObject({ code: "env_credential" })
        expect(warning.message).toContain("secret")
        expect(JSON.stringify(registered.body)).not.toContain(key)
        expect((yield* raw("POST", `${base}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })).status).toBe(201)

        const member = yield* raw("GET", base, { token: team.tokens.member })
        expect(member.body.versions[0].spec.env).toEqual({ OPENAI_API_KEY: key, MODE: "fast" })
        // Anonymous: the first read and the kept one are the same, and hold no value.
        for (let i = 0; i < 2; i++) {
          const anonymous = yield* raw("GET", base)
          expect([anonymous.status, anonymous.body.versions[0].spec.env]).toEqual([200, hidden])
          expect(JSON.stringify(anonymous.body)).not.toContain(key)
        }
        // Signed in to another account: the agent read and the config.
        const outsider = yield* raw("GET", base, { token: team.tokens.outsider })
        expect(outsider.body.versions[0].spec.env).toEqual(hidden)
        const config = yield* raw("GET", `${base}/config`, { token: team.tokens.outsider })
        expect([config.status, config.body.env, config.body.spec.env]).toEqual([200, hidden, hidden])
        expect((yield* raw("GET", `${base}/config`, { token: team.tokens.member })).body.env).toEqual({ OPENAI_API_KEY: key, MODE: "fast" })

        // Deployed by the other account: its record and its ConfigMap show the names only.
        const elsewhere = team.principals.outsider.memberships[0]!.account
        const deployed = yield* raw("POST", `${base}/deployments`, { token: team.tokens.outsider, json: { into: elsewhere } })
        expect([deployed.status, deployed.body.spec.env]).toEqual([201, hidden])
        expect((yield* raw("GET", `/deployments/${deployed.body.id}`, { token: team.tokens.outsider })).body.spec.env).toEqual(hidden)
        const history = yield* raw("GET", `${base}/deployment/history`, { token: team.tokens.outsider })
        expect(history.body.deployments.map((d: any) => d.spec.env)).toEqual([hidden])
        const configMap = yield* raw(
          "GET",
          `/deployments/${deployed.body.namespace}/configmap/helper-config?account=${elsewhere}`,
          { token: team.tokens.outsider }
        )
        expect(configMap.status).toBe(200)
        expect(JSON.stringify(configMap.body)).not.toContain(key)
        expect(configMap.body.data).toMatchObject(hidden)
        expect(configMap.body.data["agent.yaml"]).toContain("OPENAI_API_KEY: (hidden)")
      }))
  })
})
