/**
 * A cluster in memory: the embedded default (`HOSTING_CLUSTER=fake`) and the
 * test double. It passes the same cluster contract suite as the Kubernetes
 * adapter. Like a Deployment controller, it keeps `replicas` pods per
 * workload and recreates a pod that is deleted (under a new name). A
 * rollout reads `progressing` once after each apply, then `available`,
 * unless the RolloutControl failed it.
 */
import { Cluster } from "@hosting/core"
import { Context, Effect, Layer, Option } from "effect"
import { RolloutControl } from "./RolloutControl.js"

/** The rollout of a workload's latest apply: read once as progressing, then available, or failed when told. */
interface RolloutProgress {
  reads: number
  failed: { readonly reason: string; readonly message: string } | undefined
}

interface Space {
  labels: Cluster.Metadata
  configMaps: Map<string, Cluster.ConfigMap>
  secrets: Map<string, Cluster.Secret>
  workloads: Map<string, Cluster.WorkloadStatus>
  pods: Map<string, Cluster.Pod & { readonly owner: string | undefined }>
  rollouts: Map<string, RolloutProgress>
}

/** Objects to start with (the fixtures' `cluster` key). */
export interface Seed {
  readonly configmaps?:
    | ReadonlyArray<{ readonly namespace: string; readonly name: string; readonly data: Readonly<Record<string, string>> }>
    | undefined
  readonly pods?: ReadonlyArray<{ readonly namespace: string; readonly name: string }> | undefined
}

/** Builds a fake cluster holding the seed objects, and the hook that fails its rollouts. */
export const makeWithControl = (seed: Seed = {}) =>
  Effect.sync(() => {
    const spaces = new Map<string, Space>()
    let podCounter = 0
    const space = (name: string) => {
      let s = spaces.get(name)
      if (s === undefined) {
        s = { labels: {}, configMaps: new Map(), secrets: new Map(), workloads: new Map(), pods: new Map(), rollouts: new Map() }
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

    const cluster = Cluster.Cluster.of({
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
          const previous = s.workloads.get(workload.name)
          s.workloads.set(workload.name, status)
          // As a Deployment: applying the same workload again starts no rollout; a changed one starts a new one.
          if (previous === undefined || JSON.stringify(previous) !== JSON.stringify(status) || !s.rollouts.has(workload.name)) {
            s.rollouts.set(workload.name, { reads: 0, failed: undefined })
          }
          reconcile(s, workload.namespace, status)
        }),
      readWorkload: (namespace, name) => Effect.sync(() => Option.fromNullable(spaces.get(namespace)?.workloads.get(name))),
      rolloutStatus: (namespace, name) =>
        Effect.sync(() => {
          const s = spaces.get(namespace)
          const rollout = s?.workloads.has(name) === true ? s.rollouts.get(name) : undefined
          if (rollout === undefined) return Option.none()
          if (rollout.failed !== undefined) return Option.some({ state: "failed" as const, ...rollout.failed })
          return Option.some({ state: rollout.reads++ === 0 ? "progressing" as const : "available" as const })
        }),
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
    const control = RolloutControl.of({
      failRollout: (namespace, reason, message) =>
        Effect.sync(() => {
          for (const rollout of spaces.get(namespace)?.rollouts.values() ?? []) rollout.failed = { reason, message }
        })
    })
    return { cluster, control }
  })

/** Builds a fake cluster holding the seed objects. */
export const make = (seed: Seed = {}) => Effect.map(makeWithControl(seed), ({ cluster }) => cluster)

/** A fake cluster, empty or seeded, with its RolloutControl. */
export const layer = (seed: Seed = {}): Layer.Layer<Cluster.Cluster | RolloutControl> =>
  Layer.effectContext(Effect.map(makeWithControl(seed), ({ cluster, control }) =>
    Context.make(Cluster.Cluster, cluster).pipe(Context.add(RolloutControl, control))))
