/**
 * Run by InCluster.test.ts inside a mount namespace that looks like a pod:
 * the adapter with `layerFromKubeConfig()` and no kubeconfig sets up the
 * namespace named by its argument, and prints the pods listed there.
 */
import { Cluster } from "@hosting/core"
import { Effect } from "effect"
import { layerFromKubeConfig } from "../src/KubernetesCluster.js"

const namespace = process.argv[2] ?? "in-cluster"

const program = Effect.gen(function*() {
  const cluster = yield* Cluster.Cluster
  yield* cluster.ensureNamespace(namespace, { "hosting.dev/account": "acme" })
  return yield* cluster.listPods(namespace)
})

Effect.runPromise(program.pipe(Effect.provide(layerFromKubeConfig({ requestTimeout: "10 seconds" })))).then(
  (pods) => console.log(JSON.stringify({ pods })),
  (error: unknown) => {
    console.error(String(error))
    process.exitCode = 1
  }
)
