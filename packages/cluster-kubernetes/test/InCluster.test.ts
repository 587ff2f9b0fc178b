/**
 * The adapter in a pod (issue 27): with no kubeconfig, `layerFromKubeConfig`
 * uses the pod's service account, the token and CA Kubernetes mounts at
 * /var/run/secrets/kubernetes.io/serviceaccount and the API server named by
 * KUBERNETES_SERVICE_HOST and _PORT. The client runs in a mount namespace of
 * its own (`unshare`) where a tmpfs over /run holds those files, so nothing
 * outside it changes; without `unshare`, or where it may not mount, the test
 * is skipped.
 */
import { describe, expect, it } from "@effect/vitest"
import { StorageSuite } from "@hosting/testing"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as KubeApiDouble from "./KubeApiDouble.js"
import { certificate, onPath, run, scratch } from "./tools.js"

const unshare = onPath("unshare")
const openssl = onPath("openssl")
// Root may make a mount namespace; others need a user namespace (-r) as well, where the system allows one.
const unshareArgs = process.getuid?.() === 0 ? ["--mount", "--propagation", "private"] : ["--user", "--map-root-user", "--mount"]
const canMount = process.platform === "linux" && unshare !== undefined &&
  spawnSync(unshare, [...unshareArgs, "sh", "-c", "mount -t tmpfs tmpfs /run"], { timeout: 10_000 }).status === 0
const reason = !canMount
  ? " (skipped: no unshare here, or it may not make a mount namespace)"
  : openssl === undefined
  ? " (skipped: openssl is not installed)"
  : ""

const client = fileURLToPath(new URL("./inClusterClient.ts", import.meta.url))
const serviceAccount = "/var/run/secrets/kubernetes.io/serviceaccount"

describe("KubernetesCluster in a pod", () => {
  it.scoped.skipIf(reason !== "")(`uses the pod's service account when there is no kubeconfig${reason}`, () =>
    Effect.gen(function*() {
      const dir = yield* scratch
      const tls = yield* certificate(openssl!, dir)
      const token = `pod-token-${randomUUID()}`
      const double = yield* KubeApiDouble.make({ token, tls })
      const files = join(dir, "serviceaccount")
      mkdirSync(files)
      writeFileSync(join(files, "token"), token)
      writeFileSync(join(files, "ca.crt"), tls.cert)
      writeFileSync(join(files, "namespace"), "hosting")
      const ns = StorageSuite.uniqueName("ns")
      const script = [
        "mount -t tmpfs tmpfs /run",
        `mkdir -p ${serviceAccount}`,
        `cp "$FILES"/* ${serviceAccount}/`,
        `exec "$NODE" --import tsx --conditions=@hosting/source "$CLIENT" ${ns}`
      ].join(" && ")
      const output = yield* run(unshare!, [...unshareArgs, "sh", "-c", script], {
        PATH: process.env["PATH"] ?? "",
        // An empty home: no ~/.kube/config, and no KUBECONFIG, as in a pod.
        HOME: dir,
        FILES: files,
        NODE: process.execPath,
        CLIENT: client,
        KUBERNETES_SERVICE_HOST: "127.0.0.1",
        KUBERNETES_SERVICE_PORT: String(double.port)
      })
      expect(JSON.parse(output)).toEqual({ pods: [] })
      expect(double.stored("namespaces", "", ns)?.metadata.labels).toMatchObject({ "hosting.dev/account": "acme" })
      // Every call carried the mounted token, over TLS checked against the mounted CA.
      expect(double.requests.length).toBeGreaterThan(0)
      expect(double.requests.filter((r) => r.authorization !== `Bearer ${token}`)).toEqual([])
    }), 60_000)
})
