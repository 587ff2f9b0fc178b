/**
 * Use-case tests of deployments: naming, a failing cluster, fixtures.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cluster, Deployment, Deployments, Ids } from "@hosting/core"
import * as Fixtures from "@hosting/testing/Fixtures"
import { Seed, TestServices } from "@hosting/testing"
import { Effect, Option } from "effect"

describe("namespaces", () => {
  const acme = Ids.AccountName.make("acme")
  const helper = Ids.AgentName.make("helper")

  it("an account's own agent runs in <account>-<agent>; another account's in <account>-<publisher>-<agent>", () => {
    expect(Deployment.namespaceFor(acme, acme, helper)).toBe("acme-helper")
    expect(Deployment.namespaceFor(Ids.AccountName.make("beta"), acme, helper)).toBe("beta-acme-helper")
  })

  it("long names are cut to 63 characters with a stable hash, and stay DNS-1123 labels", () => {
    const long = Ids.AccountName.make("a".repeat(40))
    const agent = Ids.AgentName.make(`b${"-x".repeat(20)}`)
    const ns = Deployment.namespaceFor(long, Ids.AccountName.make("c".repeat(30)), agent)
    expect(ns.length).toBeLessThanOrEqual(63)
    expect(ns).toMatch(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])$/)
    expect(Deployment.namespaceFor(long, Ids.AccountName.make("c".repeat(30)), agent)).toBe(ns)
    expect(Deployment.namespaceFor(long, Ids.AccountName.make("d".repeat(30)), agent)).not.toBe(ns)
  })

  it("label values are cut and cleaned to what Kubernetes accepts", () => {
    expect(Deployment.labelValue("b-1:sha256+x")).toBe("b-1_sha256_x")
    const long = Deployment.labelValue("v".repeat(100))
    expect(long.length).toBeLessThanOrEqual(63)
  })
})

describe("Deployments from fixtures", () => {
  it.layer(TestServices.make({
    cluster: { configmaps: [{ namespace: "fx-helper", name: "helper-env", data: { K: "V" } }], pods: [{ namespace: "fx-helper", name: "helper-0" }] }
  }))((it) => {
    it.effect("fixture deployments and cluster objects answer the ConfigMap read and the pod restart", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* Fixtures.load(yield* Fixtures.decode({
          deployments: [{
            id: `dep-${team.account}`,
            account: team.account,
            agent: `${team.account}/helper`,
            build_id: "b-1",
            namespace: "fx-helper",
            status: "running",
            deployed_at: "2026-11-01T10:00:00Z",
            undeployed_at: null,
            spec: {}
          }]
        }))
        const deployments = yield* Deployments.Deployments
        const map = yield* deployments.configMap(team.principals.member, "fx-helper", "helper-env", team.account)
        expect(map.data).toEqual({ K: "V" })
        expect(yield* deployments.restartPod(team.principals.member, "fx-helper", "helper-0", team.account)).toEqual({
          status: "restarting",
          pod: "helper-0"
        })
        const cluster = yield* Cluster.Cluster
        expect(yield* cluster.listPods("fx-helper")).toEqual([])
        expect(Option.isSome(yield* cluster.readConfigMap("fx-helper", "helper-env"))).toBe(true)
      }))
  })
})
