/**
 * The cluster port: what the platform asks of Kubernetes (or its fake).
 * Every operation is idempotent, so a deploy can be retried safely.
 */
import { Context, type Effect, type Option, type Redacted, Schema } from "effect"

/** Labels and annotations put on every object, so an operator can see who owns it. */
export type Metadata = Readonly<Record<string, string>>

/** A ConfigMap's identity and data. */
export class ConfigMap extends Schema.Class<ConfigMap>("ConfigMap")({
  name: Schema.String,
  namespace: Schema.String,
  data: Schema.Record({ key: Schema.String, value: Schema.String })
}) {}

/**
 * A Secret's identity and data (key to value). The values are redacted so
 * that no log or error shows them; the adapter reveals them to the cluster
 * only.
 */
export interface Secret {
  readonly namespace: string
  readonly name: string
  readonly data: Readonly<Record<string, Redacted.Redacted<string>>>
}

/** An environment variable read from a key of a Secret of the workload's namespace. */
export interface SecretKeyRef {
  /** The Secret's name. */
  readonly name: string
  readonly key: string
}

/** The workload that runs a build: one Kubernetes Deployment. */
export interface Workload {
  readonly namespace: string
  readonly name: string
  readonly image: string
  readonly replicas: number
  /** Container port, when the agent listens on one. */
  readonly port: Option.Option<number>
  /** Environment of the container: literal values. */
  readonly env: Readonly<Record<string, string>>
  /** Environment of the container read from Secrets (`valueFrom.secretKeyRef`), never literal values. */
  readonly secretEnv?: Readonly<Record<string, SecretKeyRef>> | undefined
  /** ConfigMap mounted into the container (its keys become files under /etc/agent). */
  readonly configMap: string
  readonly labels: Metadata
  readonly annotations: Metadata
}

/** A workload as the cluster reports it. */
export interface WorkloadStatus {
  readonly namespace: string
  readonly name: string
  readonly image: string
  readonly replicas: number
  readonly labels: Metadata
  /** The container's literal environment. */
  readonly env: Readonly<Record<string, string>>
  /** The container's environment read from Secrets. */
  readonly secretEnv: Readonly<Record<string, SecretKeyRef>>
}

/** A pod as the cluster reports it. */
export interface Pod {
  readonly namespace: string
  readonly name: string
  readonly phase: string
}

/**
 * Where a workload's rollout stands: `pending` (the cluster has not taken up
 * the latest change yet), `progressing` (new pods are being started or old
 * ones stopped), `available` (every replica runs the latest template and is
 * ready) or `failed` (the rollout cannot finish as it is: an image that
 * cannot be pulled, a container that keeps crashing, a deadline passed).
 */
export const RolloutState = Schema.Literal("pending", "progressing", "available", "failed")
export type RolloutState = typeof RolloutState.Type

/**
 * A workload's rollout as the cluster reports it. `reason` is the cluster's
 * own word for why (`ImagePullBackOff`, `CrashLoopBackOff`,
 * `ProgressDeadlineExceeded`), `message` its sentence; both mostly come with
 * `failed`.
 */
export interface Rollout {
  readonly state: RolloutState
  readonly reason?: string | undefined
  readonly message?: string | undefined
}

/**
 * The cluster refused or failed. `reason` says whose problem it is:
 * `Unavailable` (cannot reach it), `Forbidden` (the platform's own
 * credentials lack a permission), `Invalid` (it rejected an object),
 * `Conflict`. `message` is safe to show; `cause` is for the log.
 */
export class ClusterError extends Schema.TaggedError<ClusterError>()("ClusterError", {
  reason: Schema.Literal("Unavailable", "Forbidden", "Invalid", "Conflict"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  readonly code = "cluster_error"
}

export class Cluster extends Context.Tag("@hosting/core/Cluster")<Cluster, {
  /** Creates the namespace if missing and sets its labels. */
  readonly ensureNamespace: (name: string, labels: Metadata) => Effect.Effect<void, ClusterError>
  /** Creates or replaces a ConfigMap. */
  readonly applyConfigMap: (configMap: ConfigMap, labels: Metadata) => Effect.Effect<void, ClusterError>
  readonly readConfigMap: (namespace: string, name: string) => Effect.Effect<Option.Option<ConfigMap>, ClusterError>
  /** Creates or replaces a Secret (type Opaque) with exactly this data. */
  readonly applySecret: (secret: Secret, labels: Metadata) => Effect.Effect<void, ClusterError>
  readonly readSecret: (namespace: string, name: string) => Effect.Effect<Option.Option<Secret>, ClusterError>
  /** Deletes a Secret; `false` when there was no such Secret (or namespace). */
  readonly removeSecret: (namespace: string, name: string) => Effect.Effect<boolean, ClusterError>
  /** Creates or replaces the workload of a build. */
  readonly applyWorkload: (workload: Workload) => Effect.Effect<void, ClusterError>
  readonly readWorkload: (namespace: string, name: string) => Effect.Effect<Option.Option<WorkloadStatus>, ClusterError>
  /** The rollout of a workload (its latest apply); none when there is no such workload. */
  readonly rolloutStatus: (namespace: string, name: string) => Effect.Effect<Option.Option<Rollout>, ClusterError>
  readonly listPods: (namespace: string) => Effect.Effect<ReadonlyArray<Pod>, ClusterError>
  /** Deletes a pod so that its controller recreates it; `false` when there was no such pod. */
  readonly deletePod: (namespace: string, name: string) => Effect.Effect<boolean, ClusterError>
  /** Removes the namespace and everything in it; removing a missing namespace is not an error. */
  readonly removeNamespace: (name: string) => Effect.Effect<void, ClusterError>
}>() {}
