/**
 * The contract of the Cluster port. The fake cluster and the Kubernetes
 * adapter both run it with one line: `ClusterSuite.run("fake", layer)`.
 * Every test works in its own namespace.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cluster } from "@hosting/core"
import { Effect, type Layer, Option, Redacted } from "effect"
import { RolloutControl } from "./RolloutControl.js"
import { uniqueName } from "./StorageSuite.js"

/**
 * Reads a workload's rollout until it settles (available or failed), at most
 * `reads` times; the states read, in order.
 */
export const rolloutStates = (namespace: string, name: string, reads = 10) =>
  Effect.gen(function*() {
    const cluster = yield* Cluster.Cluster
    const seen: Array<Cluster.Rollout> = []
    for (let i = 0; i < reads; i++) {
      const rollout = Option.getOrThrow(yield* cluster.rolloutStatus(namespace, name))
      seen.push(rollout)
      if (rollout.state === "available" || rollout.state === "failed") break
      // Real time: a real cluster's controller runs on its own clock, not on a test's.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
    }
    return seen
  })

/** Labels of the sample workload. */
export const labels = {
  "app.kubernetes.io/managed-by": "hosting",
  "hosting.dev/account": "acme",
  "hosting.dev/agent": "acme.helper",
  "hosting.dev/build": "b-1"
}

/** A sample workload in a namespace, for cluster adapter tests. */
export const workload = (namespace: string, overrides: Partial<Cluster.Workload> = {}): Cluster.Workload => ({
  namespace,
  name: "helper",
  image: "ghcr.io/acme/helper:b-1",
  replicas: 1,
  port: Option.some(8080),
  env: { MODE: "fast" },
  configMap: "helper-config",
  labels,
  annotations: { "hosting.dev/deployment": "dep-1" },
  ...overrides
})

/** Runs the cluster contract against a layer providing the Cluster port. */
export const run = <E>(name: string, layer: Layer.Layer<Cluster.Cluster, E>) => {
  describe(`cluster contract: ${name}`, () => {
    it.layer(layer, { timeout: 30_000 })((it) => {
      it.effect("ensureNamespace is idempotent", () =>
        Effect.gen(function*() {
          const cluster = yield* Cluster.Cluster
          const ns = uniqueName("ns")
          yield* cluster.ensureNamespace(ns, labels)
          yield* cluster.ensureNamespace(ns, labels)
          expect(yield* cluster.listPods(ns)).toEqual([])
        }))

      it.effect("a ConfigMap reads back as applied; applying again replaces its data", () =>
        Effect.gen(function*() {
          const cluster = yield* Cluster.Cluster
          const ns = uniqueName("ns")
          yield* cluster.ensureNamespace(ns, labels)
          yield* cluster.applyConfigMap(new Cluster.ConfigMap({ namespace: ns, name: "cfg", data: { A: "1", B: "2" } }), labels)
          expect(Option.getOrThrow(yield* cluster.readConfigMap(ns, "cfg")).data).toEqual({ A: "1", B: "2" })
          yield* cluster.applyConfigMap(new Cluster.ConfigMap({ namespace: ns, name: "cfg", data: { C: "3" } }), labels)
          const read = Option.getOrThrow(yield* cluster.readConfigMap(ns, "cfg"))
          expect([read.name, read.namespace, read.data]).toEqual(["cfg", ns, { C: "3" }])
        }))

      it.effect("reading a ConfigMap that does not exist gives None, in a namespace that exists or not", () =>
        Effect.gen(function*() {
          const cluster = yield* Cluster.Cluster
          const ns = uniqueName("ns")
          expect(Option.isNone(yield* cluster.readConfigMap(ns, "nothing"))).toBe(true)
          yield* cluster.ensureNamespace(ns, labels)
          expect(Option.isNone(yield* cluster.readConfigMap(ns, "nothing"))).toBe(true)
        }))

      it.effect("a workload applies idempotently, carries its labels and image, and runs its pods", () =>
        Effect.gen(function*() {
          const cluster = yield* Cluster.Cluster
          const ns = uniqueName("ns")
          yield* cluster.ensureNamespace(ns, labels)
          yield* cluster.applyWorkload(workload(ns))
          yield* cluster.applyWorkload(workload(ns, { image: "ghcr.io/acme/helper:b-2" }))
          const status = Option.getOrThrow(yield* cluster.readWorkload(ns, "helper"))
          expect([status.image, status.replicas]).toEqual(["ghcr.io/acme/helper:b-2", 1])
          expect(status.labels).toMatchObject(labels)
          const pods = yield* cluster.listPods(ns)
          expect(pods.length).toBe(1)
          expect(pods[0]!.namespace).toBe(ns)
          expect(Option.isNone(yield* cluster.readWorkload(ns, "other"))).toBe(true)
        }))

      it.effect("a Secret reads back as applied; applying again replaces its data; removing answers whether it was there", () =>
        Effect.gen(function*() {
          const cluster = yield* Cluster.Cluster
          const ns = uniqueName("ns")
          const values = (secret: Option.Option<Cluster.Secret>) =>
            Option.map(secret, (s) => [s.namespace, s.name, Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, Redacted.value(v)]))])
          expect(Option.isNone(yield* cluster.readSecret(ns, "helper-secrets"))).toBe(true)
          expect(yield* cluster.removeSecret(ns, "helper-secrets")).toBe(false)
          yield* cluster.ensureNamespace(ns, labels)
          const data = { API_KEY: Redacted.make("sk-one\nline ✓"), OTHER: Redacted.make("2") }
          yield* cluster.applySecret({ namespace: ns, name: "helper-secrets", data }, labels)
          expect(values(yield* cluster.readSecret(ns, "helper-secrets"))).toEqual(
            Option.some([ns, "helper-secrets", { API_KEY: "sk-one\nline ✓", OTHER: "2" }])
          )
          yield* cluster.applySecret({ namespace: ns, name: "helper-secrets", data: { API_KEY: Redacted.make("sk-two") } }, labels)
          expect(values(yield* cluster.readSecret(ns, "helper-secrets"))).toEqual(Option.some([ns, "helper-secrets", { API_KEY: "sk-two" }]))
          expect(yield* cluster.removeSecret(ns, "helper-secrets")).toBe(true)
          expect(Option.isNone(yield* cluster.readSecret(ns, "helper-secrets"))).toBe(true)
          expect(yield* cluster.removeSecret(ns, "helper-secrets")).toBe(false)
        }))

      it.effect("a workload's env reads back: literal values, and references to keys of Secrets (never their values)", () =>
        Effect.gen(function*() {
          const cluster = yield* Cluster.Cluster
          const ns = uniqueName("ns")
          yield* cluster.ensureNamespace(ns, labels)
          yield* cluster.applySecret({ namespace: ns, name: "helper-secrets", data: { API_KEY: Redacted.make("sk-one") } }, labels)
          yield* cluster.applyWorkload(workload(ns, { secretEnv: { API_KEY: { name: "helper-secrets", key: "API_KEY" } } }))
          const status = Option.getOrThrow(yield* cluster.readWorkload(ns, "helper"))
          expect(status.env).toEqual({ MODE: "fast" })
          expect(status.secretEnv).toEqual({ API_KEY: { name: "helper-secrets", key: "API_KEY" } })
          yield* cluster.applyWorkload(workload(ns))
          expect(Option.getOrThrow(yield* cluster.readWorkload(ns, "helper")).secretEnv).toEqual({})
        }))

      it.effect("a rollout reads pending or progressing until it is available; a workload that does not exist has none", () =>
        Effect.gen(function*() {
          const cluster = yield* Cluster.Cluster
          const ns = uniqueName("ns")
          expect(Option.isNone(yield* cluster.rolloutStatus(ns, "helper"))).toBe(true)
          yield* cluster.ensureNamespace(ns, labels)
          expect(Option.isNone(yield* cluster.rolloutStatus(ns, "helper"))).toBe(true)
          yield* cluster.applyWorkload(workload(ns, { replicas: 2 }))
          const states = (yield* rolloutStates(ns, "helper")).map((r) => r.state)
          expect(states.at(-1)).toBe("available")
          expect(states.slice(0, -1).every((state) => state === "pending" || state === "progressing")).toBe(true)
          // Settled: it stays available while nothing changes.
          expect(Option.getOrThrow(yield* cluster.rolloutStatus(ns, "helper")).state).toBe("available")
          yield* cluster.removeNamespace(ns)
          expect(Option.isNone(yield* cluster.rolloutStatus(ns, "helper"))).toBe(true)
        }))

      it.effect("a rollout the cluster fails reads failed with the cluster's reason and message; a changed workload rolls out anew", () =>
        Effect.gen(function*() {
          const control = yield* Effect.serviceOption(RolloutControl)
          // Only a double can be told to fail a rollout; a real cluster runs the rest of the suite.
          if (Option.isNone(control)) return
          const cluster = yield* Cluster.Cluster
          const ns = uniqueName("ns")
          yield* cluster.ensureNamespace(ns, labels)
          yield* cluster.applyWorkload(workload(ns, { image: "ghcr.io/acme/helper:missing" }))
          const message = 'Back-off pulling image "ghcr.io/acme/helper:missing"'
          yield* control.value.failRollout(ns, "ImagePullBackOff", message)
          const failed = (yield* rolloutStates(ns, "helper")).at(-1)!
          expect(failed).toMatchObject({ state: "failed", reason: "ImagePullBackOff" })
          expect(failed.message).toContain(message)
          yield* cluster.applyWorkload(workload(ns, { image: "ghcr.io/acme/helper:b-2" }))
          expect((yield* rolloutStates(ns, "helper")).at(-1)!.state).toBe("available")
        }))

      it.effect("deleting a pod answers true once it existed, false when there is no such pod", () =>
        Effect.gen(function*() {
          const cluster = yield* Cluster.Cluster
          const ns = uniqueName("ns")
          yield* cluster.ensureNamespace(ns, labels)
          yield* cluster.applyWorkload(workload(ns))
          const [pod] = yield* cluster.listPods(ns)
          expect(yield* cluster.deletePod(ns, pod!.name)).toBe(true)
          expect((yield* cluster.listPods(ns)).map((p) => p.name)).not.toContain(pod!.name)
          expect(yield* cluster.deletePod(ns, "no-such-pod")).toBe(false)
          expect(yield* cluster.deletePod(uniqueName("no-such-ns"), "no-such-pod")).toBe(false)
        }))

      it.effect("removing a namespace removes everything in it; removing it again is not an error", () =>
        Effect.gen(function*() {
          const cluster = yield* Cluster.Cluster
          const ns = uniqueName("ns")
          yield* cluster.ensureNamespace(ns, labels)
          yield* cluster.applyConfigMap(new Cluster.ConfigMap({ namespace: ns, name: "cfg", data: { A: "1" } }), labels)
          yield* cluster.applySecret({ namespace: ns, name: "helper-secrets", data: { A: Redacted.make("1") } }, labels)
          yield* cluster.applyWorkload(workload(ns))
          yield* cluster.removeNamespace(ns)
          yield* cluster.removeNamespace(ns)
          expect(Option.isNone(yield* cluster.readConfigMap(ns, "cfg"))).toBe(true)
          expect(Option.isNone(yield* cluster.readSecret(ns, "helper-secrets"))).toBe(true)
          expect(Option.isNone(yield* cluster.readWorkload(ns, "helper"))).toBe(true)
          expect(yield* cluster.listPods(ns)).toEqual([])
        }))
    })
  })
}
