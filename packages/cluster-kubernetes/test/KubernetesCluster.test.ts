import { describe, expect, it } from "@effect/vitest"
import { KubernetesCluster } from "@hosting/cluster-kubernetes"
import { Cluster } from "@hosting/core"
import { ClusterSuite, RolloutControl, StorageSuite } from "@hosting/testing"
import { ApiException } from "@kubernetes/client-node"
import { Config, ConfigProvider, Effect, Layer, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as KubeApiDouble from "./KubeApiDouble.js"

const token = `platform-token-${randomUUID()}`

ClusterSuite.run(
  "kubernetes (API double)",
  Layer.unwrapScoped(Effect.map(
    KubeApiDouble.make({ token }),
    (double) =>
      Layer.merge(
        KubernetesCluster.layer({ server: double.url, token: Redacted.make(token) }),
        Layer.succeed(RolloutControl.RolloutControl, {
          failRollout: (namespace, reason, message) => Effect.sync(() => double.failRollout(namespace, reason, message))
        })
      )
  ))
)

const { labels } = ClusterSuite
const workload = (namespace: string, overrides: Partial<Cluster.Workload> = {}) =>
  ClusterSuite.workload(namespace, { env: { MODE: "fast", API_URL: "http://api.local" }, ...overrides })

/** A double with a token, and the adapter pointed at it. */
const setup = (config: Partial<KubernetesCluster.KubernetesClusterConfig> = {}) =>
  Effect.gen(function*() {
    const double = yield* KubeApiDouble.make({ token })
    const cluster = yield* KubernetesCluster.make({ server: double.url, token: Redacted.make(token), ...config })
    return { double, cluster }
  })

/** A loopback port nothing listens on: bound once, then closed. */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
)

/** Every method of the port, called once on a namespace. */
const everyMethod = (cluster: Cluster.Cluster["Type"], ns: string) => ({
  ensureNamespace: cluster.ensureNamespace(ns, labels),
  applyConfigMap: cluster.applyConfigMap(new Cluster.ConfigMap({ namespace: ns, name: "cfg", data: { A: "1" } }), labels),
  readConfigMap: cluster.readConfigMap(ns, "cfg"),
  applySecret: cluster.applySecret({ namespace: ns, name: "helper-secrets", data: { A: Redacted.make("1") } }, labels),
  readSecret: cluster.readSecret(ns, "helper-secrets"),
  removeSecret: cluster.removeSecret(ns, "helper-secrets"),
  applyWorkload: cluster.applyWorkload(workload(ns)),
  readWorkload: cluster.readWorkload(ns, "helper"),
  rolloutStatus: cluster.rolloutStatus(ns, "helper"),
  listPods: cluster.listPods(ns),
  deletePod: cluster.deletePod(ns, "helper-abcde"),
  removeNamespace: cluster.removeNamespace(ns)
})

describe("KubernetesCluster against the API server double", () => {
  it.scoped("sends the platform's bearer token on every request", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.applyWorkload(workload(ns))
      yield* cluster.readConfigMap(ns, "missing")
      expect(double.requests.length).toBeGreaterThanOrEqual(3)
      expect(double.requests.filter((r) => r.authorization !== `Bearer ${token}`)).toEqual([])
    }))

  it.scoped("a namespace the platform did not make (no managed-by label, such as kube-system) is neither taken over nor removed", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const made = yield* Effect.promise(() =>
        fetch(`${double.url}/api/v1/namespaces`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "kube-system", labels: { team: "platform" } } })
        })
      )
      expect(made.status).toBe(201)
      for (const call of [cluster.ensureNamespace("kube-system", labels), cluster.removeNamespace("kube-system")]) {
        const error = yield* Effect.flip(call)
        expect(error.reason).toBe("Conflict")
        expect(error.message).toContain(`The namespace "kube-system" exists and was not made by this platform`)
      }
      const kept = double.stored("namespaces", "", "kube-system")
      expect(kept?.metadata.labels).toEqual({ team: "platform", "kubernetes.io/metadata.name": "kube-system" })
      expect(double.requests.filter((r) => r.method === "PATCH" || r.method === "DELETE")).toEqual([])
      // One of its own it updates and removes as before.
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.removeNamespace(ns)
      expect(double.stored("namespaces", "", ns)).toBeUndefined()
    }))

  it.scoped("a 403 from the cluster becomes Forbidden on every method, with a message that leaks neither the token nor the body", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      double.forbidAll(true)
      for (const [method, call] of Object.entries(everyMethod(cluster, ns))) {
        const error = yield* Effect.flip(call as Effect.Effect<unknown, Cluster.ClusterError>)
        expect([method, error._tag, error.reason]).toEqual([method, "ClusterError", "Forbidden"])
        expect(error.message).toContain("platform's cluster credentials are missing a permission")
        expect(error.message).not.toContain(token)
        expect(error.message).not.toMatch(/system:serviceaccount|is forbidden|"kind"|Status/)
        // The raw error is kept for the log.
        expect(error.cause).toBeInstanceOf(ApiException)
        expect((error.cause as ApiException<unknown>).code).toBe(403)
      }
    }))

  it.scoped("a token the cluster does not accept (401) becomes Forbidden and is not repeated in the message", () =>
    Effect.gen(function*() {
      const double = yield* KubeApiDouble.make({ token })
      const wrong = `wrong-token-${randomUUID()}`
      const cluster = yield* KubernetesCluster.make({ server: double.url, token: wrong })
      const error = yield* Effect.flip(cluster.listPods("default"))
      expect(error.reason).toBe("Forbidden")
      expect(error.message).toContain("did not accept the platform's credentials")
      expect(error.message).not.toContain(wrong)
      expect(double.requests.at(-1)?.authorization).toBe(`Bearer ${wrong}`)
    }))

  it.scoped("an unreachable cluster (a closed loopback port) becomes Unavailable", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const cluster = yield* KubernetesCluster.make({ server: `http://127.0.0.1:${port}`, token })
      const error = yield* Effect.flip(cluster.readConfigMap("default", "cfg"))
      expect(error.reason).toBe("Unavailable")
      expect(error.message).toBe(`The cluster could not be reached to read the ConfigMap "cfg" in namespace "default"; try again later.`)
      expect(error.cause).toBeDefined()
    }))

  it.scoped("a cluster answering 503 becomes Unavailable", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      double.outage(true)
      const error = yield* Effect.flip(cluster.ensureNamespace(StorageSuite.uniqueName("ns"), labels))
      expect([error.reason, error.message]).toEqual(["Unavailable", expect.stringContaining("HTTP 503")])
    }))

  it.scopedLive("a cluster that does not answer within the request timeout becomes Unavailable", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup({ requestTimeout: "300 millis" })
      double.stall(true)
      const error = yield* Effect.flip(cluster.listPods("default"))
      expect(error.reason).toBe("Unavailable")
    }))

  it.scoped("a namespace that is being removed refuses new objects with a 403, which becomes Conflict, not Forbidden", () =>
    Effect.gen(function*() {
      // The double removes namespaces at once, so this one answer comes from a bare server
      // with the Status a real API server sends while a namespace terminates.
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          new Promise<ReturnType<typeof createHttpServer>>((resolve) => {
            const server = createHttpServer((_req, res) => {
              res.writeHead(403, { "content-type": "application/json" })
              res.end(JSON.stringify({
                kind: "Status",
                apiVersion: "v1",
                metadata: {},
                status: "Failure",
                message: "configmaps \"cfg\" is forbidden: unable to create new content in namespace gone because it is being terminated",
                reason: "Forbidden",
                details: { name: "cfg", kind: "configmaps", causes: [{ reason: "NamespaceTerminating", message: "namespace gone is being terminated", field: "metadata.namespace" }] },
                code: 403
              }))
            })
            server.listen(0, "127.0.0.1", () => resolve(server))
          })
        ),
        (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const { port } = server.address() as { port: number }
      const cluster = yield* KubernetesCluster.make({ server: `http://127.0.0.1:${port}`, token })
      const error = yield* Effect.flip(cluster.applyConfigMap(new Cluster.ConfigMap({ namespace: "gone", name: "cfg", data: {} }), labels))
      expect([error.reason, error.message]).toEqual(["Conflict", expect.stringContaining("still being removed")])
    }))

  it.scoped("an object the cluster rejects (422) becomes Invalid, naming the field but not the raw body", () =>
    Effect.gen(function*() {
      const { cluster } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      const error = yield* Effect.flip(cluster.applyWorkload(workload(ns, { name: "Not_A_Name" })))
      expect(error.reason).toBe("Invalid")
      expect(error.message).toContain("metadata.name")
      expect(error.message).not.toContain(`"kind"`)
      expect((error.cause as ApiException<unknown>).code).toBe(422)
    }))

  it.scoped("the Deployment carries the labels, annotations, image, env, port and ConfigMap volume", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.applyWorkload(workload(ns))
      const stored = double.stored("deployments", ns, "helper")!
      const selectorLabel = { [KubernetesCluster.WorkloadLabel]: "helper" }
      expect(stored.metadata.labels).toEqual({ ...labels, ...selectorLabel })
      expect(stored.metadata.annotations).toEqual({ "hosting.dev/deployment": "dep-1" })
      expect(stored.metadata.uid).toBeDefined()
      expect(stored.metadata.resourceVersion).toBeDefined()
      expect(stored["spec"]).toEqual({
        replicas: 1,
        selector: { matchLabels: selectorLabel },
        template: {
          metadata: { labels: { ...labels, ...selectorLabel }, annotations: { "hosting.dev/deployment": "dep-1" } },
          spec: {
            containers: [{
              name: "agent",
              image: "ghcr.io/acme/helper:b-1",
              env: [{ name: "API_URL", value: "http://api.local" }, { name: "MODE", value: "fast" }],
              ports: [{ name: "agent", containerPort: 8080, protocol: "TCP" }],
              volumeMounts: [{ name: "agent-config", mountPath: "/etc/agent", readOnly: true }]
            }],
            volumes: [{ name: "agent-config", configMap: { name: "helper-config" } }]
          }
        }
      })
      const [pod] = yield* cluster.listPods(ns)
      expect(double.stored("pods", ns, pod!.name)?.metadata.labels).toMatchObject({ ...labels, ...selectorLabel })
    }))

  it.scoped("a Secret is an Opaque Secret with its values base64 in data; the container reads it by secretKeyRef, never by value", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      const value = `sk-${randomUUID()}\nsecond line ✓`
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.applySecret({ namespace: ns, name: "helper-secrets", data: { API_KEY: Redacted.make(value) } }, labels)
      const secret = double.stored("secrets", ns, "helper-secrets")!
      expect([secret.kind, secret["type"], secret.metadata.labels, secret["stringData"]]).toEqual(["Secret", "Opaque", labels, undefined])
      expect(secret["data"]).toEqual({ API_KEY: Buffer.from(value, "utf8").toString("base64") })
      // A name both literal and from a Secret reads the Secret.
      yield* cluster.applyWorkload(workload(ns, {
        env: { MODE: "fast", API_KEY: "a literal that must not win" },
        secretEnv: { API_KEY: { name: "helper-secrets", key: "API_KEY" } }
      }))
      const stored = double.stored("deployments", ns, "helper")!
      const container = (stored["spec"] as { template: { spec: { containers: Array<{ env: unknown }> } } }).template.spec.containers[0]!
      expect(container.env).toEqual([
        { name: "API_KEY", valueFrom: { secretKeyRef: { name: "helper-secrets", key: "API_KEY" } } },
        { name: "MODE", value: "fast" }
      ])
      expect(JSON.stringify(double.storedAll("deployments"))).not.toContain(value)
      expect(JSON.stringify(double.storedAll("configmaps"))).not.toContain(value)
      // Replacing keeps only the new data; the request that carried it is the Secret's own.
      yield* cluster.applySecret({ namespace: ns, name: "helper-secrets", data: { OTHER: Redacted.make("2") } }, labels)
      expect(double.stored("secrets", ns, "helper-secrets")!["data"]).toEqual({ OTHER: Buffer.from("2").toString("base64") })
      expect(double.requests.filter((r) => r.path.startsWith(`/api/v1/namespaces/${ns}/secrets`)).map((r) => r.method))
        .toEqual(["POST", "POST", "PUT"])
    }))

  it.scoped("a rollout reads the Deployment (GET) and, while it is not available, its pods by the Deployment's selector", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.applyWorkload(workload(ns))
      const before = double.requests.length
      expect(yield* cluster.rolloutStatus(ns, "helper")).toEqual(Option.some({ state: "available" }))
      expect(double.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([
        `GET /apis/apps/v1/namespaces/${ns}/deployments/helper`
      ])
      double.failRollout(ns, "ErrImagePull", "rpc error: code = NotFound desc = failed to pull image")
      const after = double.requests.length
      expect(yield* cluster.rolloutStatus(ns, "helper")).toEqual(Option.some({
        state: "failed",
        reason: "ErrImagePull",
        message: "rpc error: code = NotFound desc = failed to pull image"
      }))
      expect(double.requests.slice(after).map((r) => `${r.method} ${r.path}`)).toEqual([
        `GET /apis/apps/v1/namespaces/${ns}/deployments/helper`,
        `GET /api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(`${KubernetesCluster.WorkloadLabel}=helper`)}`
      ])
    }))

  it.scoped("a rollout follows the Deployment's status: generation not observed, replicas not updated or available, the progress deadline", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.applyWorkload(workload(ns, { replicas: 2 }))
      const generation = double.stored("deployments", ns, "helper")!.metadata.generation!
      const state = Effect.map(cluster.rolloutStatus(ns, "helper"), (r) => Option.getOrThrow(r))
      double.setDeploymentStatus(ns, "helper", { observedGeneration: generation - 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2 })
      expect(yield* state).toEqual({ state: "pending" })
      double.setDeploymentStatus(ns, "helper", {})
      expect(yield* state).toEqual({ state: "pending" })
      double.setDeploymentStatus(ns, "helper", { observedGeneration: generation, replicas: 3, updatedReplicas: 1, availableReplicas: 2 })
      expect(yield* state).toEqual({ state: "progressing" })
      // Old pods still running beside the new ones: not done yet.
      double.setDeploymentStatus(ns, "helper", { observedGeneration: generation, replicas: 3, updatedReplicas: 2, availableReplicas: 3 })
      expect(yield* state).toEqual({ state: "progressing" })
      double.setDeploymentStatus(ns, "helper", { observedGeneration: generation, replicas: 2, updatedReplicas: 2, availableReplicas: 1 })
      expect(yield* state).toEqual({ state: "progressing" })
      double.setDeploymentStatus(ns, "helper", { observedGeneration: generation, replicas: 2, updatedReplicas: 2, availableReplicas: 2 })
      expect(yield* state).toEqual({ state: "available" })
      const deadline = 'ReplicaSet "helper-5d9c7" has timed out progressing.'
      double.setDeploymentStatus(ns, "helper", {
        observedGeneration: generation,
        replicas: 2,
        updatedReplicas: 1,
        availableReplicas: 1,
        conditions: [{ type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded", message: deadline }]
      })
      expect(yield* state).toEqual({ state: "failed", reason: "ProgressDeadlineExceeded", message: deadline })
      double.setDeploymentStatus(ns, "helper", {
        observedGeneration: generation,
        replicas: 0,
        conditions: [{ type: "ReplicaFailure", status: "True", reason: "FailedCreate", message: "pods \"helper-x\" is forbidden: exceeded quota" }]
      })
      expect(yield* state).toMatchObject({ state: "failed", reason: "FailedCreate" })
    }))

  it.scoped("a pod of the current image that keeps crashing fails the rollout with its reason; pods of an earlier image do not count", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.applyWorkload(workload(ns))
      const generation = double.stored("deployments", ns, "helper")!.metadata.generation!
      const [pod] = double.storedAll("pods").filter((p) => p.metadata.namespace === ns)
      const crashing = (image: string) => ({
        phase: "Running",
        containerStatuses: [{
          name: "agent",
          image,
          imageID: "",
          ready: false,
          restartCount: 4,
          state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 1m20s restarting failed container=agent" } }
        }]
      })
      double.setPodStatus(ns, pod!.metadata.name, crashing("ghcr.io/acme/helper:b-1"))
      double.setDeploymentStatus(ns, "helper", { observedGeneration: generation, replicas: 1, updatedReplicas: 1, unavailableReplicas: 1 })
      expect(yield* cluster.rolloutStatus(ns, "helper")).toEqual(Option.some({
        state: "failed",
        reason: "CrashLoopBackOff",
        message: "back-off 1m20s restarting failed container=agent"
      }))
      // A pod the selector matches that runs an earlier image (left from the previous template) does not count.
      yield* cluster.applyWorkload(workload(ns, { image: "ghcr.io/acme/helper:b-2" }))
      const old = yield* Effect.promise(() =>
        fetch(`${double.url}/api/v1/namespaces/${ns}/pods`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: "helper-old", labels: { [KubernetesCluster.WorkloadLabel]: "helper" } },
            spec: { containers: [{ name: "agent", image: "ghcr.io/acme/helper:b-1" }] }
          })
        })
      )
      expect(old.status).toBe(201)
      double.setPodStatus(ns, "helper-old", crashing("ghcr.io/acme/helper:b-1"))
      double.setDeploymentStatus(ns, "helper", { observedGeneration: generation + 1, replicas: 2, updatedReplicas: 1, availableReplicas: 1 })
      expect(yield* cluster.rolloutStatus(ns, "helper")).toEqual(Option.some({ state: "progressing" }))
    }))

  it.scoped("a workload without a port gets a container without ports", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.applyWorkload(workload(ns, { port: Option.none() }))
      const spec = double.stored("deployments", ns, "helper")!["spec"] as { template: { spec: { containers: Array<Record<string, unknown>> } } }
      expect(spec.template.spec.containers[0]!["ports"]).toBeUndefined()
      expect(double.stored("services", ns, "helper")).toBeUndefined()
    }))

  it.scoped("a workload with a port gets a Service of its name that selects its pods; applying again patches it", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.applyWorkload(workload(ns))
      const selector = { [KubernetesCluster.WorkloadLabel]: "helper" }
      const service = double.stored("services", ns, "helper")!
      expect(service.metadata.labels).toEqual({ ...labels, ...selector })
      expect(service["spec"]).toEqual({ selector, ports: [{ name: "agent", port: 8080, targetPort: 8080, protocol: "TCP" }] })
      yield* cluster.applyWorkload(workload(ns, { port: Option.some(9090) }))
      const patched = double.stored("services", ns, "helper")!["spec"] as { ports: Array<{ port: number }> }
      expect(patched.ports.map((p) => p.port)).toEqual([9090])
    }))

  it.scoped("ensureNamespace on an existing namespace merge-patches its labels and keeps labels set by others", () =>
    Effect.gen(function*() {
      const { cluster, double } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      const ours = { "app.kubernetes.io/managed-by": "hosting" }
      yield* cluster.ensureNamespace(ns, { ...ours, "hosting.dev/account": "acme", "team.example/owner": "ops" })
      yield* cluster.ensureNamespace(ns, { ...ours, "hosting.dev/account": "acme2" })
      expect(double.stored("namespaces", "", ns)?.metadata.labels).toEqual({
        ...ours,
        "hosting.dev/account": "acme2",
        "team.example/owner": "ops",
        "kubernetes.io/metadata.name": ns
      })
      const patch = double.requests.find((r) => r.method === "PATCH")
      expect(patch?.contentType).toBe("application/merge-patch+json")
    }))

  it.scoped("a deleted pod is recreated by the Deployment under a new name", () =>
    Effect.gen(function*() {
      const { cluster } = yield* setup()
      const ns = StorageSuite.uniqueName("ns")
      yield* cluster.ensureNamespace(ns, labels)
      yield* cluster.applyWorkload(workload(ns, { replicas: 2 }))
      const before = (yield* cluster.listPods(ns)).map((p) => p.name)
      expect(before).toHaveLength(2)
      expect(yield* cluster.deletePod(ns, before[0]!)).toBe(true)
      const after = (yield* cluster.listPods(ns)).map((p) => p.name)
      expect(after).toHaveLength(2)
      expect(after).toContain(before[1])
      expect(after).not.toContain(before[0])
      expect(after.every((name) => name.startsWith("helper-"))).toBe(true)
    }))

  it.scoped("layerFromKubeConfig loads the kubeconfig named by KUBECONFIG and uses the context it is given", () =>
    Effect.gen(function*() {
      const double = yield* KubeApiDouble.make({ token })
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "hosting-kubeconfig-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const file = join(dir, "config")
      // The current context points at a closed port, so only the chosen context can succeed.
      const port = yield* closedPort
      writeFileSync(file, JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        "current-context": "elsewhere",
        clusters: [
          { name: "double", cluster: { server: double.url, "insecure-skip-tls-verify": true } },
          { name: "elsewhere", cluster: { server: `https://127.0.0.1:${port}` } }
        ],
        users: [{ name: "platform", user: { token } }],
        contexts: [
          { name: "double", context: { cluster: "double", user: "platform" } },
          { name: "elsewhere", context: { cluster: "elsewhere", user: "platform" } }
        ]
      }))
      const previous = process.env["KUBECONFIG"]
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          process.env["KUBECONFIG"] = file
        }),
        () =>
          Effect.sync(() => {
            if (previous === undefined) delete process.env["KUBECONFIG"]
            else process.env["KUBECONFIG"] = previous
          })
      )
      const chosen = yield* Effect.provide(Cluster.Cluster, KubernetesCluster.layerFromKubeConfig({ context: "double" }))
      expect(yield* chosen.listPods("default")).toEqual([])
      expect(double.requests.at(-1)?.authorization).toBe(`Bearer ${token}`)
      const current = yield* Effect.provide(Cluster.Cluster, KubernetesCluster.layerFromKubeConfig())
      expect((yield* Effect.flip(current.listPods("default"))).reason).toBe("Unavailable")
    }))

  it.scoped("layerConfig reads its config through Effect's Config", () =>
    Effect.gen(function*() {
      const double = yield* KubeApiDouble.make({ token })
      const layer = KubernetesCluster.layerConfig({
        server: Config.string("KUBERNETES_SERVER"),
        token: Config.redacted("KUBERNETES_TOKEN")
      })
      const cluster = yield* Effect.provide(Cluster.Cluster, layer).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["KUBERNETES_SERVER", double.url], ["KUBERNETES_TOKEN", token]])))
      )
      expect(yield* cluster.listPods("default")).toEqual([])
      expect(double.requests.at(-1)?.authorization).toBe(`Bearer ${token}`)
    }))
})
