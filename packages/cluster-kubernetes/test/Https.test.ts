/**
 * The adapter and kubectl against the API server double over HTTPS, with a
 * self-signed certificate made here: kubectl sends a bearer token only over
 * HTTPS, and reading back with kubectl checks that the double's REST paths
 * and JSON shapes are the ones a real client expects.
 */
import { describe, expect, it } from "@effect/vitest"
import { KubernetesCluster } from "@hosting/cluster-kubernetes"
import { Cluster } from "@hosting/core"
import { StorageSuite } from "@hosting/testing"
import { Effect, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as KubeApiDouble from "./KubeApiDouble.js"
import { certificate, onPath, run, scratch } from "./tools.js"

const openssl = onPath("openssl")
const kubectl = onPath("kubectl")
const token = `platform-token-${randomUUID()}`
const labels = { "hosting.dev/account": "acme", "hosting.dev/agent": "acme.helper" }

const httpsDouble = Effect.gen(function*() {
  const dir = yield* scratch
  const tls = yield* certificate(openssl!, dir)
  const double = yield* KubeApiDouble.make({ token, tls })
  return { dir, double, caData: Buffer.from(tls.cert).toString("base64") }
})

const workload = (namespace: string): Cluster.Workload => ({
  namespace,
  name: "helper",
  image: "ghcr.io/acme/helper:b-1",
  replicas: 2,
  port: Option.some(8080),
  env: { MODE: "fast" },
  configMap: "helper-config",
  labels,
  annotations: { "hosting.dev/deployment": "dep-1" }
})

const noOpenssl = openssl === undefined
const sslNote = noOpenssl ? " (skipped: openssl is not installed)" : ""
const kubectlNote = kubectl === undefined
  ? " (skipped: kubectl is not installed; Debian package kubernetes-client)"
  : noOpenssl
  ? " (skipped: openssl is not installed)"
  : ""

describe("KubernetesCluster over HTTPS", () => {
  it.scoped.skipIf(noOpenssl)(`verifies the server with the configured CA and sends its token${sslNote}`, () =>
    Effect.gen(function*() {
      const { caData, double } = yield* httpsDouble
      const cluster = yield* KubernetesCluster.make({ server: double.url, token: Redacted.make(token), caData })
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.applyConfigMap(new Cluster.ConfigMap({ namespace: ns, name: "cfg", data: { A: "1" } }), labels)
      expect(Option.getOrThrow(yield* cluster.readConfigMap(ns, "cfg")).data).toEqual({ A: "1" })
      expect(double.requests.filter((r) => r.authorization !== `Bearer ${token}`)).toEqual([])
    }))

  it.scoped.skipIf(noOpenssl)(`a server whose certificate is not trusted becomes Unavailable${sslNote}`, () =>
    Effect.gen(function*() {
      const { double } = yield* httpsDouble
      const cluster = yield* KubernetesCluster.make({ server: double.url, token })
      const error = yield* Effect.flip(cluster.listPods("default"))
      expect(error.reason).toBe("Unavailable")
      // The TLS handshake failed, so the token never left the process.
      expect(double.requests).toEqual([])
    }))

  it.scoped.skipIf(kubectl === undefined || noOpenssl)(
    `kubectl reads back over HTTPS what the adapter wrote to the double${kubectlNote}`,
    () =>
      Effect.gen(function*() {
        const { caData, dir, double } = yield* httpsDouble
        const cluster = yield* KubernetesCluster.make({ server: double.url, token: Redacted.make(token), caData })
        const ns = StorageSuite.uniqueName("ns")
        yield* cluster.ensureNamespace(ns, labels)
        yield* cluster.applyConfigMap(new Cluster.ConfigMap({ namespace: ns, name: "cfg", data: { "agent.yaml": "name: helper\n" } }), labels)
        yield* cluster.applyWorkload(workload(ns))

        const kubeconfig = join(dir, "kubeconfig")
        writeFileSync(kubeconfig, JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          "current-context": "double",
          clusters: [{ name: "double", cluster: { server: double.url, "certificate-authority-data": caData } }],
          users: [{ name: "platform", user: { token } }],
          contexts: [{ name: "double", context: { cluster: "double", user: "platform", namespace: ns } }]
        }))
        // HOME and the cache point into the scratch folder so kubectl leaves nothing behind.
        const env = { PATH: process.env["PATH"] ?? "", HOME: dir, KUBECONFIG: kubeconfig }
        const kubectlJson = (...args: Array<string>) =>
          run(kubectl!, ["--cache-dir", join(dir, "cache"), ...args, "-o", "json"], env).pipe(
            Effect.map((out) => JSON.parse(out) as Record<string, any>)
          )
        const requestsBefore = double.requests.length

        const configMap = yield* kubectlJson("get", "configmap", "cfg")
        expect(configMap["kind"]).toBe("ConfigMap")
        expect(configMap["metadata"].namespace).toBe(ns)
        expect(configMap["metadata"].labels).toEqual(labels)
        expect(configMap["data"]).toEqual({ "agent.yaml": "name: helper\n" })

        const deployment = yield* kubectlJson("get", "deployment", "helper")
        expect(deployment["spec"].template.spec.containers[0].image).toBe("ghcr.io/acme/helper:b-1")
        expect(deployment["status"].readyReplicas).toBe(2)

        const pods = yield* kubectlJson("get", "pods", "-l", `${KubernetesCluster.WorkloadLabel}=helper`)
        expect(pods["items"].map((p: { metadata: { name: string } }) => p.metadata.name).sort())
          .toEqual((yield* cluster.listPods(ns)).map((p) => p.name).sort())
        expect((yield* kubectlJson("get", "pods", "-l", `${KubernetesCluster.WorkloadLabel}=other`))["items"]).toEqual([])

        const fromKubectl = double.requests.slice(requestsBefore)
        expect(fromKubectl.length).toBeGreaterThan(0)
        expect(fromKubectl.filter((r) => r.authorization !== `Bearer ${token}`)).toEqual([])
      }),
    60_000
  )
})
