/**
 * The Kubernetes manifests of deploy/kubernetes (issue 27): each overlay is
 * rendered with `kubectl kustomize` and applied with `kubectl apply
 * --server-side` to the API server double, and the objects it then holds are
 * checked: what runs, how it is probed, stopped and confined, where its
 * settings and secrets come from, and that its permissions are exactly the
 * calls of the Kubernetes adapter. Without kubectl the tests are skipped;
 * HOSTING_TEST_KUBECTL_REQUIRED=1 (CI, once kubectl is there) makes that a
 * failure.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as KubeApiDouble from "./KubeApiDouble.js"
import { onPath, run, scratch } from "./tools.js"

const kubectl = onPath("kubectl")
const required = process.env["HOSTING_TEST_KUBECTL_REQUIRED"] === "1"
const skipNote = kubectl === undefined ? " (skipped: kubectl is not installed; Debian package kubernetes-client)" : ""
const overlays = fileURLToPath(new URL("../../../deploy/kubernetes/overlays/", import.meta.url))

/** The namespace every namespaced object of the manifests is in. */
const namespace = "hosting"

// Loosely typed views of the stored objects, for reading the fields checked here.
interface Container {
  readonly name: string
  readonly image: string
  readonly args?: ReadonlyArray<string>
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value?: string }>
  readonly envFrom?: ReadonlyArray<{ readonly configMapRef?: { readonly name: string } }>
  readonly volumeMounts?: ReadonlyArray<{ readonly name: string; readonly mountPath: string; readonly readOnly?: boolean }>
  readonly resources?: { readonly requests?: Record<string, string>; readonly limits?: Record<string, string> }
  readonly securityContext?: Record<string, unknown>
  readonly [field: string]: unknown
}
interface PodSpec {
  readonly containers: ReadonlyArray<Container>
  readonly initContainers?: ReadonlyArray<Container>
  readonly volumes: ReadonlyArray<{ readonly name: string; readonly [source: string]: unknown }>
  readonly securityContext: Record<string, unknown>
  readonly serviceAccountName: string
  readonly automountServiceAccountToken?: boolean
  readonly terminationGracePeriodSeconds: number
}
interface DeploymentSpec {
  readonly replicas: number
  readonly strategy?: { readonly type: string }
  readonly selector: { readonly matchLabels: Record<string, string> }
  readonly template: { readonly metadata: { readonly labels: Record<string, string> }; readonly spec: PodSpec }
}

/** Renders an overlay and applies it server-side to the double, as an operator would apply it to a cluster. */
const applyOverlay = (overlay: "sqlite" | "postgres") =>
  Effect.gen(function*() {
    const dir = yield* scratch
    const double = yield* KubeApiDouble.make()
    // Plain HTTP without a token: kubectl sends a bearer token only over HTTPS (Https.test.ts covers that).
    const kubeconfig = join(dir, "kubeconfig")
    writeFileSync(kubeconfig, JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "double",
      clusters: [{ name: "double", cluster: { server: double.url } }],
      users: [{ name: "operator", user: {} }],
      contexts: [{ name: "double", context: { cluster: "double", user: "operator" } }]
    }))
    // HOME and the cache point into the scratch folder so kubectl leaves nothing behind.
    const env = { PATH: process.env["PATH"] ?? "", HOME: dir }
    const rendered = join(dir, `${overlay}.yaml`)
    writeFileSync(rendered, yield* run(kubectl!, ["kustomize", join(overlays, overlay)], env))
    // No OpenAPI document on the double, so no client-side validation; the double validates what it stores.
    const apply = run(kubectl!, [
      "--kubeconfig", kubeconfig, "--cache-dir", join(dir, "cache"),
      "apply", "--server-side", "--validate=false", "-f", rendered
    ], env)
    const output = yield* apply
    return { double, output, apply }
  })

const deploymentOf = (double: KubeApiDouble.KubeApiDouble) => {
  const deployment = double.stored("deployments", namespace, "hosting")
  expect(deployment, "the Deployment hosting").toBeDefined()
  return deployment!["spec"] as DeploymentSpec
}

const serverOf = (spec: DeploymentSpec) => spec.template.spec.containers.find((c) => c.name === "hosting")!

/** The settings of the generated ConfigMap the server's envFrom names (its name ends in a hash of its content). */
const settingsOf = (double: KubeApiDouble.KubeApiDouble, container: Container) => {
  const name = container.envFrom?.[0]?.configMapRef?.name ?? ""
  expect(name).toMatch(/^hosting-config-[a-z0-9]+$/)
  const configMap = double.stored("configmaps", namespace, name)
  expect(configMap, `the ConfigMap ${name}`).toBeDefined()
  return configMap!["data"] as Record<string, string>
}

const envOf = (container: Container) => Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]))
const mountOf = (container: Container, mountPath: string) => container.volumeMounts?.find((m) => m.mountPath === mountPath)

/** The rules the Kubernetes adapter's calls need (KubernetesCluster.ts), and no more. */
const adapterRules = [
  { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "create", "patch", "delete"] },
  { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create", "update"] },
  { apiGroups: [""], resources: ["secrets"], verbs: ["create", "update", "delete"] },
  { apiGroups: [""], resources: ["services"], verbs: ["create", "patch"] },
  { apiGroups: [""], resources: ["pods"], verbs: ["list", "delete"] },
  { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "create", "update"] }
]

/** The Pod Security Standard "restricted", as far as these fields go, for every container of the pod. */
const expectRestricted = (pod: PodSpec) => {
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } })
  for (const container of [...pod.containers, ...(pod.initContainers ?? [])]) {
    expect(container.securityContext, container.name).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" }
    })
    expect(container.resources?.requests, container.name).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) })
    expect(container.resources?.limits, container.name).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) })
    // A read-only root file system needs a writable /tmp.
    const tmp = mountOf(container, "/tmp")
    expect(pod.volumes.find((v) => v.name === tmp?.name), `${container.name}: /tmp`).toMatchObject({ emptyDir: {} })
  }
}

/** What both overlays hold: the objects, the probes, the stop, the identity and its permissions. */
const expectCommon = (double: KubeApiDouble.KubeApiDouble) => {
  expect(double.stored("namespaces", "", namespace)).toBeDefined()
  expect(double.stored("serviceaccounts", namespace, "hosting")).toBeDefined()
  // Nothing landed in another namespace (an object the namespace transformer missed would be in kubectl's default).
  for (const plural of ["configmaps", "services", "deployments", "poddisruptionbudgets", "serviceaccounts", "persistentvolumeclaims", "secrets"] as const) {
    expect(double.storedAll(plural).filter((o) => o.metadata.namespace !== namespace), plural).toEqual([])
  }
  // The manifests ship no Secret: re-applying them never overwrites the operator's.
  expect(double.storedAll("secrets")).toEqual([])

  const spec = deploymentOf(double)
  const pod = spec.template.spec
  const server = serverOf(spec)
  expect(server.image).toBe("ghcr.io/OWNER/hosting:latest")
  expect(server["ports"]).toEqual(expect.arrayContaining([{ name: "http", containerPort: 8080, protocol: "TCP" }]))
  expect(server["livenessProbe"]).toMatchObject({ httpGet: { path: "/healthz", port: "http" } })
  expect(server["readinessProbe"]).toMatchObject({ httpGet: { path: "/readyz", port: "http" } })
  expect(server["startupProbe"]).toMatchObject({ httpGet: { path: "/readyz", port: "http" } })
  expectRestricted(pod)

  const settings = settingsOf(double, server)
  expect(settings).toMatchObject({ HOSTING_HOST: "0.0.0.0", HOSTING_PORT: "8080", HOSTING_CLUSTER: "kubernetes" })
  // The pod is given time for the delay (readiness off, still serving) and the grace after it.
  const delayMs = Number(settings["HOSTING_SHUTDOWN_DELAY_MS"])
  expect(delayMs).toBeGreaterThanOrEqual(2000)
  expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(delayMs + Number(settings["HOSTING_SHUTDOWN_GRACE_MS"] ?? 3000))

  // The Service and the PodDisruptionBudget select the Deployment's pods.
  const labels = spec.template.metadata.labels
  expect(labels).toMatchObject(spec.selector.matchLabels)
  const service = double.stored("services", namespace, "hosting")!["spec"] as { selector: Record<string, string>; ports: Array<unknown> }
  expect(labels).toMatchObject(service.selector)
  expect(service.ports).toEqual([{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }])
  const budget = double.stored("poddisruptionbudgets", namespace, "hosting")!["spec"] as { maxUnavailable: number; selector: { matchLabels: Record<string, string> } }
  expect(budget.maxUnavailable).toBe(1)
  expect(labels).toMatchObject(budget.selector.matchLabels)

  // The pod runs as the service account, with its token, bound to exactly the adapter's rules.
  expect(pod.serviceAccountName).toBe("hosting")
  expect(pod.automountServiceAccountToken).not.toBe(false)
  expect(double.stored("clusterroles", "", "hosting")!["rules"]).toEqual(adapterRules)
  expect(double.stored("clusterrolebindings", "", "hosting")).toMatchObject({
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "hosting" },
    subjects: [{ kind: "ServiceAccount", name: "hosting", namespace }]
  })
  expect(double.storedAll("roles")).toEqual([])
  expect(double.storedAll("rolebindings")).toEqual([])
  return { spec, pod, server, settings }
}

/** Every write kubectl made was a server-side apply by its own field manager. */
const expectServerSideApply = (double: KubeApiDouble.KubeApiDouble) => {
  const writes = double.requests.filter((r) => r.method !== "GET")
  expect(writes.length).toBeGreaterThan(0)
  for (const write of writes) {
    expect(write.method, write.path).toBe("PATCH")
    expect(write.contentType, write.path).toBe("application/apply-patch+yaml")
    expect(new URL(write.path, "http://127.0.0.1").searchParams.get("fieldManager"), write.path).toBe("kubectl")
  }
}

describe("deploy/kubernetes applied with kubectl to the API server double", () => {
  it.runIf(required && kubectl === undefined)("kubectl is required (HOSTING_TEST_KUBECTL_REQUIRED=1)", () => {
    expect.fail("HOSTING_TEST_KUBECTL_REQUIRED=1 but kubectl is not on PATH: install it (apt-get install kubernetes-client)")
  })

  it.scoped.skipIf(kubectl === undefined)(`overlays/sqlite: one replica recreated on a volume, the database on it${skipNote}`, () =>
    Effect.gen(function*() {
      const { apply, double } = yield* applyOverlay("sqlite")
      const { pod, server, settings, spec } = expectCommon(double)
      expect(spec.replicas).toBe(1)
      // A second process on the file refuses to start, so the old pod goes before the new one comes.
      expect(spec.strategy?.type).toBe("Recreate")
      expect(double.stored("persistentvolumeclaims", namespace, "hosting-data")!["spec"]).toMatchObject({ accessModes: ["ReadWriteOnce"] })
      const data = mountOf(server, "/data")
      expect(pod.volumes.find((v) => v.name === data?.name)).toMatchObject({ persistentVolumeClaim: { claimName: "hosting-data" } })
      expect(settings).toMatchObject({ HOSTING_DATABASE_URL: "sqlite:/data/hosting.db" })
      expect(settings["HOSTING_OBJECT_STORE"]).toMatch(/^fs:\/data\//)
      expect(pod.initContainers ?? []).toEqual([])
      expect(double.storedAll("pods").length).toBe(1)
      expectServerSideApply(double)

      // Applying again changes nothing: the same objects, no new rollout.
      const generation = double.stored("deployments", namespace, "hosting")!.metadata.generation
      yield* apply
      expect(double.stored("deployments", namespace, "hosting")!.metadata.generation).toBe(generation)
      expect(double.storedAll("configmaps").length).toBe(1)
    }), 60_000)

  it.scoped.skipIf(kubectl === undefined)(`overlays/postgres: three replicas, the database URL and S3 keys from Secret files, migrated by an init container${skipNote}`, () =>
    Effect.gen(function*() {
      const { double } = yield* applyOverlay("postgres")
      const { pod, server, settings, spec } = expectCommon(double)
      expect(spec.replicas).toBe(3)
      expect(spec.strategy?.type).toBe("RollingUpdate")
      expect(double.storedAll("pods").length).toBe(3)
      expect(double.storedAll("persistentvolumeclaims")).toEqual([])
      // No secret in the ConfigMap: the database URL and the keys are files of Secrets.
      expect(Object.keys(settings).filter((name) => /DATABASE_URL$|ACCESS_KEY/.test(name))).toEqual([])
      expect(settings["HOSTING_OBJECT_STORE"]).toMatch(/^s3:\/\//)

      /** The Secret and key a container's NAME_FILE variable reads, through its mount. */
      const secretFileOf = (container: Container, variable: string) => {
        const path = envOf(container)[`${variable}_FILE`] ?? ""
        const mount = container.volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`))
        expect(mount, `${container.name}: ${variable}_FILE=${path}`).toMatchObject({ readOnly: true })
        const volume = pod.volumes.find((v) => v.name === mount!.name) as { secret?: { secretName: string } } | undefined
        return { secret: volume?.secret?.secretName, key: path.slice(mount!.mountPath.length + 1) }
      }
      expect(secretFileOf(server, "HOSTING_DATABASE_URL")).toEqual({ secret: "hosting-database", key: "url" })
      expect(secretFileOf(server, "AWS_ACCESS_KEY_ID")).toEqual({ secret: "hosting-s3", key: "access-key-id" })
      expect(secretFileOf(server, "AWS_SECRET_ACCESS_KEY")).toEqual({ secret: "hosting-s3", key: "secret-access-key" })

      // The same image migrates first (`main.js migrate`), on the same database, with the same settings.
      const migrate = pod.initContainers?.find((c) => c.name === "migrate")
      expect(migrate).toBeDefined()
      expect(migrate!.image).toBe(server.image)
      expect(migrate!.args).toEqual(["migrate"])
      expect(migrate!.envFrom).toEqual(server.envFrom)
      expect(secretFileOf(migrate!, "HOSTING_DATABASE_URL")).toEqual({ secret: "hosting-database", key: "url" })
      expectServerSideApply(double)
    }), 60_000)
})
