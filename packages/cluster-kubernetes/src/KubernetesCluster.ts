/**
 * The Cluster port on Kubernetes, over `@kubernetes/client-node`: one
 * namespace per account, a ConfigMap for the agent's files, an Opaque Secret
 * for the values of its secrets, and an apps/v1 Deployment per workload. Every write is create-or-replace, so a deploy can
 * be retried; every client error becomes a `ClusterError` whose message is
 * safe to show and whose cause keeps the raw error for the log.
 */
import { Cluster, Deployment } from "@hosting/core"
import * as k8s from "@kubernetes/client-node"
import { Config, type ConfigError, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"

/** Where the cluster is and how the platform authenticates to it. */
export interface KubernetesClusterConfig {
  /** API server URL: `https://…`, or `http://…` for a local proxy such as `kubectl proxy`. */
  readonly server: string
  /** Bearer token of the platform's service account. */
  readonly token?: Redacted.Redacted<string> | string | undefined
  /** CA bundle of the API server, base64 PEM as in a kubeconfig's `certificate-authority-data`. */
  readonly caData?: string | undefined
  /** Accepts any server certificate: for throwaway development clusters only. */
  readonly skipTLSVerify?: boolean | undefined
  /** How long one API call may take before the cluster counts as unavailable (default 30 seconds). */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** How long `removeNamespace` waits for Kubernetes to finish removing a namespace (default 60 seconds). */
  readonly namespaceRemovalTimeout?: Duration.DurationInput | undefined
}

/** Options of `layerFromKubeConfig`. */
export interface KubeConfigOptions {
  /** Context to use instead of the kubeconfig's current one. */
  readonly context?: string | undefined
  /** As in `KubernetesClusterConfig`. */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** As in `KubernetesClusterConfig`. */
  readonly namespaceRemovalTimeout?: Duration.DurationInput | undefined
}

/** The label that ties a Deployment to its pods (its selector). */
export const WorkloadLabel = "hosting.dev/workload"

/** Where the workload's ConfigMap is mounted in the container. */
export const ConfigMountPath = "/etc/agent"

const containerName = "agent"
const configVolumeName = "agent-config"

// Sidecars injected by the cluster (service meshes, log shippers) may come first.
const agentContainer = (deployment: k8s.V1Deployment) => {
  const containers = deployment.spec?.template.spec?.containers ?? []
  return containers.find((c) => c.name === containerName) ?? containers[0]
}

/** The Kubernetes `Status` object that comes back in the body of a failed call. */
interface StatusBody {
  readonly message?: string
  readonly reason?: string
  readonly details?: { readonly causes?: ReadonlyArray<{ readonly reason?: string }> }
}

const statusCode = (error: unknown): number | undefined =>
  error instanceof k8s.ApiException && typeof error.code === "number" ? error.code : undefined

const statusBody = (error: unknown): StatusBody | undefined => {
  if (!(error instanceof k8s.ApiException)) return undefined
  const body: unknown = error.body
  if (typeof body !== "string") return typeof body === "object" && body !== null ? body as StatusBody : undefined
  try {
    const parsed: unknown = JSON.parse(body)
    return typeof parsed === "object" && parsed !== null ? parsed as StatusBody : undefined
  } catch {
    return undefined
  }
}

// Marks a namespace that has not gone yet, to retry on it and nothing else.
const stillThere: unique symbol = Symbol("stillThere")

const hasStatus = (code: number) => (error: unknown) => statusCode(error) === code

// Only Status.message goes to the user, and only for rejected objects, where it
// names the offending field; it is trimmed so a verbose server cannot flood a response.
const shortReason = (body: StatusBody | undefined) => {
  const message = body?.message?.trim()
  if (message === undefined || message === "") return ""
  return `: ${message.length > 300 ? `${message.slice(0, 300)}…` : message}`
}

const toClusterError = (action: string) => (error: unknown): Cluster.ClusterError => {
  const code = statusCode(error)
  const body = statusBody(error)
  if (code === undefined) {
    return new Cluster.ClusterError({
      reason: "Unavailable",
      message: `The cluster could not be reached to ${action}; try again later.`,
      cause: error
    })
  }
  if (code === 401 || code === 403) {
    // A namespace being deleted refuses new objects with a 403; that is a race, not a missing permission.
    if (body?.details?.causes?.some((c) => c.reason === "NamespaceTerminating") === true) {
      return new Cluster.ClusterError({
        reason: "Conflict",
        message: `Could not ${action}: the namespace is still being removed; try again shortly.`,
        cause: error
      })
    }
    return new Cluster.ClusterError({
      reason: "Forbidden",
      message: code === 401
        ? `The cluster did not accept the platform's credentials to ${action}. ` +
          "This is not caused by your request: an operator must renew or fix the platform's cluster credentials."
        : `The platform's cluster credentials are missing a permission to ${action}. ` +
          "This is not caused by your request: an operator must grant the platform's service account that permission.",
      cause: error
    })
  }
  if (code === 409) {
    return new Cluster.ClusterError({
      reason: "Conflict",
      message: `The cluster reported a conflicting change while trying to ${action}; try again.`,
      cause: error
    })
  }
  if (code === 408 || code === 429 || code >= 500) {
    return new Cluster.ClusterError({
      reason: "Unavailable",
      message: `The cluster could not ${action} (HTTP ${code}); try again later.`,
      cause: error
    })
  }
  return new Cluster.ClusterError({
    reason: "Invalid",
    message: `The cluster refused to ${action}${shortReason(body)}`,
    cause: error
  })
}

const resolveToken = (token: KubernetesClusterConfig["token"]) =>
  token === undefined ? undefined : Redacted.isRedacted(token) ? Redacted.value(token) : token

/** Builds a client-node KubeConfig from a plain config. */
const kubeConfigOf = (config: KubernetesClusterConfig) => {
  const url = new URL(config.server)
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`KubernetesCluster: server must be an http(s) URL, got "${url.protocol}"`)
  }
  const token = resolveToken(config.token)
  const kubeConfig = new k8s.KubeConfig()
  kubeConfig.loadFromClusterAndUser(
    {
      name: "hosting",
      server: config.server.replace(/\/+$/, ""),
      // client-node refuses plain http unless skipTLSVerify is set; there is no TLS to verify there.
      skipTLSVerify: url.protocol === "http:" || config.skipTLSVerify === true,
      ...(config.caData === undefined ? {} : { caData: config.caData })
    },
    { name: "hosting", ...(token === undefined ? {} : { token }) }
  )
  return kubeConfig
}

interface Timeouts {
  readonly request: Duration.Duration
  readonly namespaceRemoval: Duration.Duration
}

const timeoutsOf = (options: { readonly requestTimeout?: Duration.DurationInput | undefined; readonly namespaceRemovalTimeout?: Duration.DurationInput | undefined }): Timeouts => ({
  request: Duration.decode(options.requestTimeout ?? "30 seconds"),
  namespaceRemoval: Duration.decode(options.namespaceRemovalTimeout ?? "60 seconds")
})

// Per-call middleware: the abort signal lets an interrupted or timed-out Effect
// cancel its HTTP request; the content type picks the patch format.
const callOptions = (signal: AbortSignal, contentType?: string): k8s.ConfigurationOptions => ({
  middleware: [{
    pre: (context) => {
      context.setSignal(signal)
      if (contentType !== undefined) context.setHeaderParam("Content-Type", contentType)
      return new k8s.Observable(Promise.resolve(context))
    },
    post: (response) => new k8s.Observable(Promise.resolve(response))
  }],
  middlewareMergeStrategy: "append"
})

const fromKubeConfig = (kubeConfig: k8s.KubeConfig, timeouts: Timeouts): Cluster.Cluster["Type"] => {
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api)
  const apps = kubeConfig.makeApiClient(k8s.AppsV1Api)

  /** One API call: cancelled when interrupted, and failing with the raw error. */
  const call = <A>(run: (options: k8s.ConfigurationOptions) => Promise<A>, contentType?: string) =>
    Effect.tryPromise({ try: (signal) => run(callOptions(signal, contentType)), catch: (error) => error }).pipe(
      Effect.timeout(timeouts.request)
    )

  const createOrReplace = <A, B>(create: Effect.Effect<A, unknown>, replace: Effect.Effect<B, unknown>) =>
    create.pipe(Effect.asVoid, Effect.catchIf(hasStatus(409), () => Effect.asVoid(replace)))

  const orNone = <A>(read: Effect.Effect<A, unknown>): Effect.Effect<Option.Option<A>, unknown> =>
    read.pipe(Effect.map(Option.some), Effect.catchIf(hasStatus(404), () => Effect.succeed(Option.none<A>())))

  const namespaceExists = (name: string) =>
    orNone(call((o) => core.readNamespace({ name }, o))).pipe(Effect.map(Option.isSome))

  /**
   * Fails unless the namespace, when it exists, is the platform's (it
   * carries the managed-by label the platform puts on what it makes): an
   * account and agent whose names make `kube-system` must not take it over
   * or remove it.
   */
  const mustBeOurs = (name: string) =>
    orNone(call((o) => core.readNamespace({ name }, o))).pipe(
      Effect.mapError(toClusterError(`read the namespace "${name}"`)),
      Effect.flatMap((found) =>
        Option.isSome(found) && found.value.metadata?.labels?.[Deployment.labelKeys.managedBy] !== Deployment.managedByValue
          ? Effect.fail(
            new Cluster.ClusterError({
              reason: "Conflict",
              message: `The namespace "${name}" exists and was not made by this platform (it lacks the label ` +
                `${Deployment.labelKeys.managedBy}=${Deployment.managedByValue}); the platform neither takes over nor removes ` +
                "namespaces it did not make. Deploy under another account or agent name."
            })
          )
          : Effect.void
      )
    )

  const ensureNamespace: Cluster.Cluster["Type"]["ensureNamespace"] = (name, labels) =>
    createOrReplace(
      call((o) => core.createNamespace({ body: { apiVersion: "v1", kind: "Namespace", metadata: { name, labels: { ...labels } } } }, o)),
      // It exists: only the platform's own is updated. A merge patch touches only our labels, so labels other tools put on it survive.
      Effect.zipRight(
        mustBeOurs(name),
        call((o) => core.patchNamespace({ name, body: { metadata: { labels: { ...labels } } } }, o), k8s.PatchStrategy.MergePatch)
      )
    ).pipe(
      Effect.mapError((error) => error instanceof Cluster.ClusterError ? error : toClusterError(`set up the namespace "${name}"`)(error)),
      Effect.withSpan("KubernetesCluster.ensureNamespace", { attributes: { namespace: name } })
    )

  const applyConfigMap: Cluster.Cluster["Type"]["applyConfigMap"] = (configMap, labels) => {
    const { name, namespace } = configMap
    const body: k8s.V1ConfigMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace, labels: { ...labels } },
      data: { ...configMap.data }
    }
    return createOrReplace(
      call((o) => core.createNamespacedConfigMap({ namespace, body }, o)),
      call((o) => core.replaceNamespacedConfigMap({ namespace, name, body }, o))
    ).pipe(
      Effect.mapError(toClusterError(`write the ConfigMap "${name}" in namespace "${namespace}"`)),
      Effect.withSpan("KubernetesCluster.applyConfigMap", { attributes: { namespace, name } })
    )
  }

  const readConfigMap: Cluster.Cluster["Type"]["readConfigMap"] = (namespace, name) =>
    orNone(call((o) => core.readNamespacedConfigMap({ namespace, name }, o))).pipe(
      Effect.map(Option.map((found) => new Cluster.ConfigMap({ namespace, name, data: { ...found.data } }))),
      Effect.mapError(toClusterError(`read the ConfigMap "${name}" in namespace "${namespace}"`)),
      Effect.withSpan("KubernetesCluster.readConfigMap", { attributes: { namespace, name } })
    )

  const applySecret: Cluster.Cluster["Type"]["applySecret"] = (secret, labels) => {
    const { name, namespace } = secret
    const body = secretOf(secret, labels)
    return createOrReplace(
      call((o) => core.createNamespacedSecret({ namespace, body }, o)),
      call((o) => core.replaceNamespacedSecret({ namespace, name, body }, o))
    ).pipe(
      // The cluster's message about a Secret never holds its data; the cause (the raw error) goes to the log only.
      Effect.mapError(toClusterError(`write the Secret "${name}" in namespace "${namespace}"`)),
      Effect.withSpan("KubernetesCluster.applySecret", { attributes: { namespace, name } })
    )
  }

  const readSecret: Cluster.Cluster["Type"]["readSecret"] = (namespace, name) =>
    orNone(call((o) => core.readNamespacedSecret({ namespace, name }, o))).pipe(
      Effect.map(Option.map((found): Cluster.Secret => ({ namespace, name, data: secretData(found) }))),
      Effect.mapError(toClusterError(`read the Secret "${name}" in namespace "${namespace}"`)),
      Effect.withSpan("KubernetesCluster.readSecret", { attributes: { namespace, name } })
    )

  const removeSecret: Cluster.Cluster["Type"]["removeSecret"] = (namespace, name) =>
    call((o) => core.deleteNamespacedSecret({ namespace, name }, o)).pipe(
      Effect.as(true),
      Effect.catchIf(hasStatus(404), () => Effect.succeed(false)),
      Effect.mapError(toClusterError(`delete the Secret "${name}" in namespace "${namespace}"`)),
      Effect.withSpan("KubernetesCluster.removeSecret", { attributes: { namespace, name } })
    )

  const applyWorkload: Cluster.Cluster["Type"]["applyWorkload"] = (workload) => {
    const body = deploymentOf(workload)
    const { namespace, name } = workload
    const service = serviceOf(workload)
    return createOrReplace(
      call((o) => apps.createNamespacedDeployment({ namespace, body }, o)),
      call((o) => apps.replaceNamespacedDeployment({ namespace, name, body }, o))
    ).pipe(
      Effect.zipRight(
        service === undefined ? Effect.void : createOrReplace(
          call((o) => core.createNamespacedService({ namespace, body: service }, o)),
          // A Service's clusterIP is fixed once assigned: patch what we own instead of replacing it.
          call(
            (o) => core.patchNamespacedService({ namespace, name, body: { metadata: service.metadata, spec: { selector: service.spec!.selector, ports: service.spec!.ports } } }, o),
            k8s.PatchStrategy.MergePatch
          )
        )
      ),
      Effect.mapError(toClusterError(`write the Deployment "${name}" in namespace "${namespace}"`)),
      Effect.withSpan("KubernetesCluster.applyWorkload", { attributes: { namespace, name, image: workload.image } })
    )
  }

  const readWorkload: Cluster.Cluster["Type"]["readWorkload"] = (namespace, name) =>
    orNone(call((o) => apps.readNamespacedDeployment({ namespace, name }, o))).pipe(
      Effect.map(Option.map((deployment): Cluster.WorkloadStatus => {
        const env = agentContainer(deployment)?.env ?? []
        return {
          namespace,
          name,
          image: agentContainer(deployment)?.image ?? "",
          replicas: deployment.spec?.replicas ?? 1,
          labels: { ...deployment.metadata?.labels },
          env: Object.fromEntries(env.flatMap((e) => e.value === undefined ? [] : [[e.name, e.value]])),
          secretEnv: Object.fromEntries(env.flatMap((e) => {
            const ref = e.valueFrom?.secretKeyRef
            return ref?.name === undefined ? [] : [[e.name, { name: ref.name, key: ref.key }]]
          }))
        }
      })),
      Effect.mapError(toClusterError(`read the Deployment "${name}" in namespace "${namespace}"`)),
      Effect.withSpan("KubernetesCluster.readWorkload", { attributes: { namespace, name } })
    )

  /** The pods a Deployment selects that run its current image: a rollout's new pods, not those of an earlier template. */
  const currentPods = (namespace: string, deployment: k8s.V1Deployment) => {
    const matchLabels = deployment.spec?.selector.matchLabels ?? {}
    const labelSelector = Object.entries(matchLabels).map(([key, value]) => `${key}=${value}`).join(",")
    const image = agentContainer(deployment)?.image
    return call((o) => core.listNamespacedPod({ namespace, labelSelector }, o)).pipe(
      Effect.map((list) => list.items.filter((pod) => podImage(pod) === image))
    )
  }

  const rolloutStatus: Cluster.Cluster["Type"]["rolloutStatus"] = (namespace, name) =>
    orNone(call((o) => apps.readNamespacedDeployment({ namespace, name }, o))).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeed(Option.none<Cluster.Rollout>()),
        onSome: (deployment) => {
          const rollout = rolloutOf(deployment)
          // The Deployment says a rollout goes on, or ran out of time; its pods say why, when they cannot start.
          return rollout.state === "progressing" || rollout.state === "failed"
            ? Effect.map(currentPods(namespace, deployment), (pods) => Option.some(withPodReason(rollout, pods)))
            : Effect.succeed(Option.some(rollout))
        }
      })),
      Effect.mapError(toClusterError(`read the rollout of the Deployment "${name}" in namespace "${namespace}"`)),
      Effect.withSpan("KubernetesCluster.rolloutStatus", { attributes: { namespace, name } })
    )

  const listPods: Cluster.Cluster["Type"]["listPods"] = (namespace) =>
    call((o) => core.listNamespacedPod({ namespace }, o)).pipe(
      Effect.map((list) =>
        list.items.map((pod): Cluster.Pod => ({
          namespace,
          name: pod.metadata?.name ?? "",
          phase: pod.status?.phase ?? "Unknown"
        }))
      ),
      Effect.mapError(toClusterError(`list the pods in namespace "${namespace}"`)),
      Effect.withSpan("KubernetesCluster.listPods", { attributes: { namespace } })
    )

  const deletePod: Cluster.Cluster["Type"]["deletePod"] = (namespace, name) =>
    call((o) => core.deleteNamespacedPod({ namespace, name }, o)).pipe(
      Effect.as(true),
      Effect.catchIf(hasStatus(404), () => Effect.succeed(false)),
      Effect.mapError(toClusterError(`delete the pod "${name}" in namespace "${namespace}"`)),
      Effect.withSpan("KubernetesCluster.deletePod", { attributes: { namespace, name } })
    )

  // Kubernetes removes a namespace's content asynchronously; waiting (boundedly)
  // keeps the port's promise that nothing of it can be read afterwards.
  const awaitRemoval = (name: string) =>
    namespaceExists(name).pipe(
      Effect.flatMap((exists) => exists ? Effect.fail(stillThere) : Effect.void),
      Effect.retry({
        while: (error) => error === stillThere,
        schedule: Schedule.spaced("1 second").pipe(Schedule.upTo(timeouts.namespaceRemoval))
      }),
      Effect.catchIf((error) => error === stillThere, () =>
        Effect.logWarning(`namespace "${name}" is still being removed after ${Duration.format(timeouts.namespaceRemoval)}`))
    )

  const removeNamespace: Cluster.Cluster["Type"]["removeNamespace"] = (name) =>
    call((o) => core.deleteNamespace({ name, propagationPolicy: "Background" }, o)).pipe(
      Effect.asVoid,
      Effect.catchIf(hasStatus(404), () => Effect.void),
      Effect.zipRight(awaitRemoval(name)),
      Effect.asVoid,
      Effect.mapError(toClusterError(`remove the namespace "${name}"`)),
      (remove) => Effect.zipRight(mustBeOurs(name), remove),
      Effect.withSpan("KubernetesCluster.removeNamespace", { attributes: { namespace: name } })
    )

  return Cluster.Cluster.of({
    ensureNamespace,
    applyConfigMap,
    readConfigMap,
    applySecret,
    readSecret,
    removeSecret,
    applyWorkload,
    readWorkload,
    rolloutStatus,
    listPods,
    deletePod,
    removeNamespace
  })
}

/** The image of a pod's agent container. */
const podImage = (pod: k8s.V1Pod) => {
  const containers = pod.spec?.containers ?? []
  return (containers.find((c) => c.name === containerName) ?? containers[0])?.image
}

/**
 * Reasons a container waits for that a rollout does not get over by waiting:
 * an image that cannot be pulled or named, a container that keeps crashing or
 * cannot be made. Kubernetes itself only gives up at the progress deadline.
 */
export const failingWaitReasons: ReadonlySet<string> = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "ErrImageNeverPull",
  "InvalidImageName",
  "CrashLoopBackOff",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError"
])

// Messages come from the cluster and may be long (a registry's whole answer): kept to a readable length.
const shortMessage = (message: string | undefined) => {
  const text = message?.trim()
  return text === undefined || text === "" ? undefined : text.length > 500 ? `${text.slice(0, 500)}…` : text
}

/**
 * A Deployment's rollout from its status, as `kubectl rollout status` reads
 * it: `pending` until the controller has seen the latest spec
 * (observedGeneration), `failed` once the Progressing condition says
 * ProgressDeadlineExceeded or ReplicaFailure is true, `available` when every
 * replica is updated and available and no old one is left, `progressing`
 * otherwise.
 */
export const rolloutOf = (deployment: k8s.V1Deployment): Cluster.Rollout => {
  const status = deployment.status
  const generation = deployment.metadata?.generation ?? 0
  if (status === undefined || (status.observedGeneration ?? 0) < generation) return { state: "pending" }
  const conditions = status.conditions ?? []
  const progressing = conditions.find((c) => c.type === "Progressing")
  if (progressing?.reason === "ProgressDeadlineExceeded") {
    return { state: "failed", reason: "ProgressDeadlineExceeded", message: shortMessage(progressing.message) }
  }
  const replicaFailure = conditions.find((c) => c.type === "ReplicaFailure" && c.status === "True")
  if (replicaFailure !== undefined) {
    return { state: "failed", reason: replicaFailure.reason ?? "ReplicaFailure", message: shortMessage(replicaFailure.message) }
  }
  const desired = deployment.spec?.replicas ?? 1
  const updated = status.updatedReplicas ?? 0
  const complete = updated >= desired && (status.replicas ?? 0) <= updated && (status.availableReplicas ?? 0) >= desired
  return { state: complete ? "available" : "progressing" }
}

/**
 * A rollout that goes on, or failed, with the reason of a pod that cannot
 * start (its container waiting for a reason in `failingWaitReasons`): that
 * makes it failed, with the pod's reason and message, which say more than a
 * deadline.
 */
export const withPodReason = (rollout: Cluster.Rollout, pods: ReadonlyArray<k8s.V1Pod>): Cluster.Rollout => {
  for (const pod of pods) {
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
    const waiting = statuses.map((s) => s.state?.waiting).find((w) => w?.reason !== undefined && failingWaitReasons.has(w.reason))
    if (waiting !== undefined) return { state: "failed", reason: waiting.reason, message: shortMessage(waiting.message) }
  }
  return rollout
}

/**
 * The Service that gives a workload with a port a stable name in the cluster
 * (`<workload>.<namespace>.svc`), which the HTTP agent runtime calls; none
 * for a workload without a port.
 */
export const serviceOf = (workload: Cluster.Workload): k8s.V1Service | undefined =>
  Option.match(workload.port, {
    onNone: () => undefined,
    onSome: (port) => ({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: workload.name, namespace: workload.namespace, labels: { ...workload.labels, [WorkloadLabel]: workload.name } },
      spec: {
        selector: { [WorkloadLabel]: workload.name },
        ports: [{ name: containerName, port, targetPort: port, protocol: "TCP" }]
      }
    })
  })

/** The Opaque Secret of a port's Secret: its values base64 in `data`, as the API server keeps them. */
export const secretOf = (secret: Cluster.Secret, labels: Cluster.Metadata): k8s.V1Secret => ({
  apiVersion: "v1",
  kind: "Secret",
  type: "Opaque",
  metadata: { name: secret.name, namespace: secret.namespace, labels: { ...labels } },
  data: Object.fromEntries(
    Object.entries(secret.data).map(([key, value]) => [key, Buffer.from(Redacted.value(value), "utf8").toString("base64")])
  )
})

/** The values of a Secret read from the cluster (`stringData` is write-only there, but a server may echo it). */
const secretData = (secret: k8s.V1Secret): Cluster.Secret["data"] => ({
  ...Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([key, value]) => [key, Redacted.make(Buffer.from(value, "base64").toString("utf8"))])
  ),
  ...Object.fromEntries(Object.entries(secret.stringData ?? {}).map(([key, value]) => [key, Redacted.make(value)]))
})

/** The apps/v1 Deployment that runs a workload. */
export const deploymentOf = (workload: Cluster.Workload): k8s.V1Deployment => {
  const labels = { ...workload.labels, [WorkloadLabel]: workload.name }
  const annotations = { ...workload.annotations }
  // Sorted so that the same workload always yields the same pod template and
  // re-applying it does not start a rollout.
  // A name both literal and from a Secret is the Secret's: the port never puts a secret's value in the template.
  const secretEnv = workload.secretEnv ?? {}
  const env: Array<k8s.V1EnvVar> = [...new Set([...Object.keys(workload.env), ...Object.keys(secretEnv)])].sort().map((name) => {
    const ref = secretEnv[name]
    return ref === undefined
      ? { name, value: workload.env[name]! }
      : { name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } }
  })
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: workload.name, namespace: workload.namespace, labels, annotations },
    spec: {
      replicas: workload.replicas,
      selector: { matchLabels: { [WorkloadLabel]: workload.name } },
      template: {
        metadata: { labels, annotations },
        spec: {
          containers: [{
            name: containerName,
            image: workload.image,
            env,
            ...Option.match(workload.port, {
              onNone: () => ({}),
              onSome: (containerPort) => ({ ports: [{ name: containerName, containerPort, protocol: "TCP" }] })
            }),
            volumeMounts: [{ name: configVolumeName, mountPath: ConfigMountPath, readOnly: true }]
          }],
          volumes: [{ name: configVolumeName, configMap: { name: workload.configMap } }]
        }
      }
    }
  }
}

/** Builds the Cluster port for the Kubernetes API server the config points at. */
export const make = (config: KubernetesClusterConfig): Effect.Effect<Cluster.Cluster["Type"]> =>
  Effect.sync(() => fromKubeConfig(kubeConfigOf(config), timeoutsOf(config)))

/** The Cluster port on the Kubernetes API server the config points at. */
export const layer = (config: KubernetesClusterConfig): Layer.Layer<Cluster.Cluster> =>
  Layer.effect(Cluster.Cluster, make(config))

/** The Cluster port with its config read through Effect's `Config` (the environment by default). */
export const layerConfig = (
  config: Config.Config.Wrap<KubernetesClusterConfig>
): Layer.Layer<Cluster.Cluster, ConfigError.ConfigError> =>
  Layer.effect(Cluster.Cluster, Effect.flatMap(Config.unwrap(config), make))

/**
 * The Cluster port on the cluster of the usual kubeconfig: `$KUBECONFIG`,
 * `~/.kube/config`, or the in-cluster service account when run in a pod.
 */
export const layerFromKubeConfig = (options: KubeConfigOptions = {}): Layer.Layer<Cluster.Cluster> =>
  Layer.effect(
    Cluster.Cluster,
    Effect.sync(() => {
      const kubeConfig = new k8s.KubeConfig()
      kubeConfig.loadFromDefault()
      if (options.context !== undefined) kubeConfig.setCurrentContext(options.context)
      return fromKubeConfig(kubeConfig, timeoutsOf(options))
    })
  )
