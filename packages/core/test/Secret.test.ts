import { describe, expect, it } from "@effect/vitest"
import { Deployment, Deployments, Ids, Secret } from "@hosting/core"
import { DateTime, Option, Schema } from "effect"

describe("Secret", () => {
  it("names are environment-variable style; values are 1 byte to 64 KiB without NUL", () => {
    const name = Schema.is(Secret.SecretName)
    expect(["API_KEY", "_X", "A1", "A".repeat(128)].every(name)).toBe(true)
    expect(["api_key", "1A", "A-B", "", "A".repeat(129), "A B"].some(name)).toBe(false)
    const value = Schema.is(Secret.SecretValue)
    expect(["x", "line\nline ✓", "x".repeat(64 * 1024)].every(value)).toBe(true)
    expect(["", "a\u0000b", "x".repeat(64 * 1024 + 1), "é".repeat(32 * 1024 + 1)].some(value)).toBe(false)
  })

  it("env overrides refuse a bad name, a reference with more than `secret`, and more than 100 entries, rather than dropping them", () => {
    const valid = Schema.is(Secret.EnvOverrides)
    expect(valid({ MODE: "fast", lower_ok: "1", KEY: { secret: "API_KEY" } })).toBe(true)
    for (const env of [{ "A-B": "x" }, { "1A": "x" }, { A: { secret: "API_KEY", x: 1 } }, { A: { secret: "lower" } }, { A: 1 }]) {
      expect(Schema.decodeUnknownEither(Secret.EnvOverrides)(env)._tag, JSON.stringify(env)).toBe("Left")
    }
    expect(valid(Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`V${i}`, "x"])))).toBe(false)
  })

  it("a deployment's environment: the spec's, with the deploy's entries in place of those of the same name", () => {
    const spec = { env: { MODE: "fast", KEY: { secret: "SPEC_KEY" }, KEPT: "1", N: 5 } }
    const overrides = { MODE: { secret: Secret.SecretName.make("MODE_SECRET") }, KEY: "plain", NEW: "2" }
    expect(Deployments.environmentOf(spec, overrides)).toEqual({
      plain: { KEY: "plain", KEPT: "1", NEW: "2" },
      secrets: { MODE: "MODE_SECRET" }
    })
    expect(Deployments.environmentOf(spec)).toEqual({ plain: { MODE: "fast", KEPT: "1" }, secrets: { KEY: "SPEC_KEY" } })
  })

  it("outside the deploying account a deployment's own env shows the names only", () => {
    const record = new Deployment.DeploymentRecord({
      id: Deployment.DeploymentId.make("dep-1"),
      account_id: Ids.AccountId.make("a-1"),
      account: Ids.AccountName.make("beta"),
      publisher_id: Ids.AccountId.make("a-2"),
      publisher: Ids.AccountName.make("acme"),
      agent_name: Ids.AgentName.make("helper"),
      build_id: Ids.BuildId.make("b-1"),
      namespace: "beta-acme-helper",
      status: "running",
      deployed_at: DateTime.unsafeMake(0),
      undeployed_at: Option.none(),
      spec: { env: { A: "spec value" } },
      env: { MODE: "slow", KEY: { secret: Secret.SecretName.make("API_KEY") } }
    })
    expect(Deployment.toView(record).env).toEqual({ MODE: "slow", KEY: { secret: "API_KEY" } })
    const hidden = Deployment.toView(record, true, true)
    expect([hidden.spec["env"], hidden.env]).toEqual([{ A: "(hidden)" }, { MODE: "(hidden)", KEY: "(hidden)" }])
  })
})
