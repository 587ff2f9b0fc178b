/**
 * A deploy that refers to secrets, through the use cases and this adapter,
 * against the Kubernetes API double (issue 28): the namespace gets an Opaque
 * Secret with the deploying account's values, the Deployment reads them by
 * `secretKeyRef`, and no value is in a ConfigMap or the Deployment; a
 * missing secret stops the deploy before any request reaches the cluster.
 */
import { describe, expect, it } from "@effect/vitest"
import { KubernetesCluster } from "@hosting/cluster-kubernetes"
import { Catalog, Deployments, Ids, Secret, Secrets } from "@hosting/core"
import { Seed, TestServices } from "@hosting/testing"
import { Context, Effect, Layer, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import * as KubeApiDouble from "./KubeApiDouble.js"

const token = `platform-token-${randomUUID()}`

class Double extends Context.Tag("test/KubeApiDouble")<Double, KubeApiDouble.KubeApiDouble>() {}

// One double: the layer is memoized, so the cluster and the test share it.
const double = Layer.scoped(Double, KubeApiDouble.make({ token }))
const cluster = Layer.unwrapEffect(Effect.map(Double, (d) => KubernetesCluster.layer({ server: d.url, token: Redacted.make(token) })))
const services = Layer.merge(TestServices.make({ clusterLayer: Layer.provide(cluster, double) }), double)

describe("a deploy with secrets on Kubernetes (API double)", () => {
  it.layer(services)((it) => {
    it.effect("the Secret holds the values, the Deployment refers to it by secretKeyRef; a missing secret sends nothing to the cluster", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const api = yield* Double
        const name = Ids.AgentName.make("helper")
        yield* (yield* Catalog.Catalog).register(team.principals.owner, {
          account: team.account,
          name,
          build_id: Ids.BuildId.make("b-1"),
          registry: "ghcr.io/acme",
          spec_content: "name: helper\ndescription: d\nport: 8080\nenv:\n  MODE: fast\n  OPENAI_API_KEY: { secret: OPENAI_KEY }\n"
        })
        const deployments = yield* Deployments.Deployments
        const input = {
          account: team.account,
          name,
          build_id: Ids.BuildId.make("b-1"),
          env: { LEVEL: "debug", GH_TOKEN: { secret: Secret.SecretName.make("GITHUB_TOKEN") } }
        }

        const before = api.requests.length
        const missing = yield* Effect.flip(deployments.deploy(team.principals.owner, input))
        expect([missing._tag, missing.message]).toEqual([
          "SecretsMissing",
          expect.stringContaining("GITHUB_TOKEN, OPENAI_KEY")
        ])
        expect(api.requests.length).toBe(before)

        const openai = `sk-${randomUUID()}`
        const github = `ghp-${randomUUID()}`
        const secrets = yield* Secrets.Secrets
        yield* secrets.set(team.principals.owner, team.account, Secret.SecretName.make("OPENAI_KEY"), Redacted.make(openai))
        yield* secrets.set(team.principals.admin, team.account, Secret.SecretName.make("GITHUB_TOKEN"), Redacted.make(github))
        const deployed = yield* deployments.deploy(team.principals.owner, input)
        const ns = deployed.namespace

        const secret = api.stored("secrets", ns, "helper-secrets")!
        expect([secret["type"], secret.metadata.labels?.["app.kubernetes.io/managed-by"]]).toEqual(["Opaque", "hosting"])
        const data = secret["data"] as Record<string, string>
        expect(Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]))).toEqual({
          GH_TOKEN: github,
          OPENAI_API_KEY: openai
        })
        const container = (api.stored("deployments", ns, "helper")!["spec"] as {
          template: { spec: { containers: Array<{ env: Array<unknown> }> } }
        }).template.spec.containers[0]!
        expect(container.env).toEqual([
          { name: "GH_TOKEN", valueFrom: { secretKeyRef: { name: "helper-secrets", key: "GH_TOKEN" } } },
          { name: "LEVEL", value: "debug" },
          { name: "MODE", value: "fast" },
          { name: "OPENAI_API_KEY", valueFrom: { secretKeyRef: { name: "helper-secrets", key: "OPENAI_API_KEY" } } }
        ])
        const elsewhere = JSON.stringify([api.storedAll("configmaps"), api.storedAll("deployments"), api.storedAll("pods"), deployed])
        expect(elsewhere).not.toContain(openai)
        expect(elsewhere).not.toContain(github)
        expect(api.stored("configmaps", ns, "helper-config")!["data"]).toMatchObject({ MODE: "fast", LEVEL: "debug" })

        // A deploy that refers to no secret (a plain value in place of the spec's reference) removes the Secret,
        // after the Deployment that no longer reads it.
        const plain = yield* deployments.deploy(team.principals.owner, { ...input, env: { OPENAI_API_KEY: "plain" } })
        expect(plain.env).toEqual({ OPENAI_API_KEY: "plain" })
        expect(api.stored("secrets", ns, "helper-secrets")).toBeUndefined()
        const paths = api.requests.map((r) => `${r.method} ${r.path}`)
        const replaced = paths.lastIndexOf(`PUT /apis/apps/v1/namespaces/${ns}/deployments/helper`)
        const removed = paths.lastIndexOf(`DELETE /api/v1/namespaces/${ns}/secrets/helper-secrets`)
        expect(replaced).toBeGreaterThan(0)
        expect(removed).toBeGreaterThan(replaced)
      }))
  })
})
