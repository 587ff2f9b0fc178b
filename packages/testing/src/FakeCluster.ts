/**
 * A cluster in memory: the embedded default (`HOSTING_CLUSTER=fake`) and the
 * test double. It passes the same cluster contract suite as the Kubernetes
 * adapter. Like a Deployment controller, it keeps `replicas` pods per
 * workload and recreates a pod that is deleted (under a new name).
 */
import { Cluster } from "@hosting/core"
import { Effect, Layer, Option } from "effect"

interface Space {
  labels: Cluster.Metadata
  configMaps: Map<string, Cluster.ConfigMap>
  secrets: Map<string, Cluster.Secret>
  workloads: Map<string, Cluster.WorkloadStatus>
  pods: Map<string, Cluster.Pod & { readonly owner: string | undefined }>
}

/** Objects to start with (the fixtures' `cluster` key). */
export interface Seed {
  readonly configmaps?:
    | ReadonlyArray<{ readonly namespace: string; readonly name: string; readonly data: Readonly<Record<string, string>> }>
    | undefined
  readonly pods?: ReadonlyArray<{ readonly namespace: string; readonly name: string }> | undefined
}

/** Builds a fake cluster holding the seed objects. */
export const make = (seed: Seed = {}) =>
  Effect.sync(() => {
    const spaces = new Map<string, Space>()
    let podCounter = 0
    const space = (name: string) => {
      let s = spaces.get(name)
      if (s === undefined) {
        s = { labels: {}, configMaps: new Map(), secrets: new Map(), workloads: new Map(), pods: new Map() }
        spaces.set(name, s)
      }
      return s
    }
    const newPodName = (workload: string) => `${workload}-${(++podCounter).toString(36).padStart(5, "0")}`
    const reconcile = (s: Space, namespace: string, workload: Cluster.WorkloadStatus) => {
      const owned = [...s.pods.values()].filter((p) => p.owner === workload.name)
      for (let i = owned.length; i < workload.replicas; i++) {
        const name = newPodName(workload.name)
        s.pods.set(name, { namespace, name, phase: "Running", owner: workload.name })
      }
      for (const extra of owned.slice(workload.replicas)) s.pods.delete(extra.name)
    }
    for (const cm of seed.configmaps ?? []) {
      space(cm.namespace).configMaps.set(cm.name, new Cluster.ConfigMap({ namespace: cm.namespace, name: cm.name, data: { ...cm.data } }))
    }
    for (const pod of seed.pods ?? []) {
      space(pod.namespace).pods.set(pod.name, { namespace: pod.namespace, name: pod.name, phase: "Running", owner: undefined })
    }

    return Cluster.Cluster.of({
      ensureNamespace: (name, labels) =>
        Effect.sync(() => {
          space(name).labels = { ...labels }
        }),
      applyConfigMap: (configMap) =>
        Effect.sync(() => {
          space(configMap.namespace).configMaps.set(configMap.name, new Cluster.ConfigMap({ ...configMap, data: { ...configMap.data } }))
        }),
      readConfigMap: (namespace, name) => Effect.sync(() => Option.fromNullable(spaces.get(namespace)?.configMaps.get(name))),
      applySecret: (secret) =>
        Effect.sync(() => {
          space(secret.namespace).secrets.set(secret.name, { namespace: secret.namespace, name: secret.name, data: { ...secret.data } })
        }),
      readSecret: (namespace, name) => Effect.sync(() => Option.fromNullable(spaces.get(namespace)?.secrets.get(name))),
      removeSecret: (namespace, name) => Effect.sync(() => spaces.get(namespace)?.secrets.delete(name) ?? false),
      applyWorkload: (workload) =>
        Effect.sync(() => {
          const s = space(workload.namespace)
          const status: Cluster.WorkloadStatus = {
            namespace: workload.namespace,
            name: workload.name,
            image: workload.image,
            replicas: workload.replicas,
            labels: { ...workload.labels },
            env: { ...workload.env },
            secretEnv: { ...workload.secretEnv }
          }
          s.workloads.set(workload.name, status)
          reconcile(s, workload.namespace, status)
        }),
      readWorkload: (namespace, name) => Effect.sync(() => Option.fromNullable(spaces.get(namespace)?.workloads.get(name))),
      listPods: (namespace) =>
        Effect.sync(() =>
          [...(spaces.get(namespace)?.pods.values() ?? [])].map(({ name, namespace, phase }) => ({ name, namespace, phase }))
        ),
      deletePod: (namespace, name) =>
        Effect.sync(() => {
          const s = spaces.get(namespace)
          const pod = s?.pods.get(name)
          if (s === undefined || pod === undefined) return false
          s.pods.delete(name)
          const workload = pod.owner === undefined ? undefined : s.workloads.get(pod.owner)
          if (workload) reconcile(s, namespace, workload)
          return true
        }),
      removeNamespace: (name) => Effect.sync(() => void spaces.delete(name))
    })
  })

/** A fake cluster, empty or seeded. */
export const layer = (seed: Seed = {}) => Layer.effect(Cluster.Cluster, make(seed))
