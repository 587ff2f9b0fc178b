/**
 * A Kubernetes API server double for the adapter's tests. It listens on
 * 127.0.0.1 only (plain HTTP, or HTTPS when given a key and certificate),
 * speaks the real REST paths, discovery and JSON shapes of the resources in
 * `resources` (the adapter's, and what the deployment manifests hold),
 * answers failures with real `Status` objects, takes server-side apply, and
 * plays a minimal Deployment controller, so the adapter and kubectl are
 * tested through real clients rather than against mocks of them. It keeps
 * everything in memory and acts at once: deleting a namespace removes
 * everything in it before the answer.
 */
import { Effect } from "effect"
import { createHash, randomInt, randomUUID } from "node:crypto"
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"

/** How the double is started. */
export interface Options {
  /** When set, every request must carry `Authorization: Bearer <token>` (401 otherwise). */
  readonly token?: string
  /** Serve HTTPS with this PEM key and certificate instead of plain HTTP. */
  readonly tls?: { readonly key: string; readonly cert: string }
}

/** A request as the double received it. */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly authorization: string | undefined
  readonly contentType: string | undefined
}

/** A stored Kubernetes object, as JSON. */
export interface KubeObject {
  apiVersion: string
  kind: string
  metadata: Metadata
  [field: string]: unknown
}

interface Metadata {
  name: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  creationTimestamp?: string
  deletionTimestamp?: string
  generation?: number
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }>
  [field: string]: unknown
}

/** The resources the double serves. */
export type Plural =
  | "namespaces"
  | "configmaps"
  | "pods"
  | "services"
  | "secrets"
  | "serviceaccounts"
  | "persistentvolumeclaims"
  | "deployments"
  | "jobs"
  | "poddisruptionbudgets"
  | "roles"
  | "rolebindings"
  | "clusterroles"
  | "clusterrolebindings"

/** A running double. */
export interface KubeApiDouble {
  /** Base URL of the API server, e.g. `http://127.0.0.1:40123`. */
  readonly url: string
  readonly port: number
  /** Every request received, in order. */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** A copy of a stored object (pass `""` as namespace for a cluster-scoped one). */
  readonly stored: (plural: Plural, namespace: string, name: string) => KubeObject | undefined
  /** Copies of every stored object of a resource, by namespace and name. */
  readonly storedAll: (plural: Plural) => ReadonlyArray<KubeObject>
  /** While on, every request is answered 403 Forbidden. */
  readonly forbidAll: (on: boolean) => void
  /** While on, every request is answered 503, as an API server behind a failing load balancer would. */
  readonly outage: (on: boolean) => void
  /** While on, requests get no answer (until the client gives up or the double stops). */
  readonly stall: (on: boolean) => void
  /** Sets the status of a stored Deployment, as its controller would (until the next write to it). */
  readonly setDeploymentStatus: (namespace: string, name: string, status: Record<string, unknown>) => void
  /** Sets the status of a stored pod, as its kubelet would. */
  readonly setPodStatus: (namespace: string, name: string, status: Record<string, unknown>) => void
  /**
   * Makes the current rollout of every Deployment in the namespace stick as a
   * real one does when its pods cannot start: the pods Pending with their
   * container waiting for `reason` (`ImagePullBackOff`), the Deployment
   * without available replicas. A later change of the template rolls out anew.
   */
  readonly failRollout: (namespace: string, reason: string, message: string) => void
  readonly close: () => Promise<void>
}

interface ResourceInfo {
  readonly plural: Plural
  readonly kind: string
  /** The API group, `""` for the core group; every resource here is at version v1. */
  readonly group: string
  readonly namespaced: boolean
  readonly shortNames: ReadonlyArray<string>
}

const resource = (plural: Plural, kind: string, group: string, namespaced: boolean, ...shortNames: Array<string>): ResourceInfo => ({
  plural,
  kind,
  group,
  namespaced,
  shortNames
})

const rbacGroup = "rbac.authorization.k8s.io"

/** What the double serves; any other object is stored by the same rules when it is added here. */
const resources: Record<Plural, ResourceInfo> = {
  namespaces: resource("namespaces", "Namespace", "", false, "ns"),
  configmaps: resource("configmaps", "ConfigMap", "", true, "cm"),
  pods: resource("pods", "Pod", "", true, "po"),
  services: resource("services", "Service", "", true, "svc"),
  secrets: resource("secrets", "Secret", "", true),
  serviceaccounts: resource("serviceaccounts", "ServiceAccount", "", true, "sa"),
  persistentvolumeclaims: resource("persistentvolumeclaims", "PersistentVolumeClaim", "", true, "pvc"),
  deployments: resource("deployments", "Deployment", "apps", true, "deploy"),
  jobs: resource("jobs", "Job", "batch", true),
  poddisruptionbudgets: resource("poddisruptionbudgets", "PodDisruptionBudget", "policy", true, "pdb"),
  roles: resource("roles", "Role", rbacGroup, true),
  rolebindings: resource("rolebindings", "RoleBinding", rbacGroup, true),
  clusterroles: resource("clusterroles", "ClusterRole", rbacGroup, false),
  clusterrolebindings: resource("clusterrolebindings", "ClusterRoleBinding", rbacGroup, false)
}

const infos = Object.values(resources)
const groups = [...new Set(infos.map((info) => info.group).filter((group) => group !== ""))]

const apiVersionOf = (info: ResourceInfo) => (info.group === "" ? "v1" : `${info.group}/v1`)
const verbs = ["create", "delete", "get", "list", "patch", "update"]
const bodyLimit = 1024 * 1024
// The controller creates pods in a loop up to `replicas`; a cap keeps that loop bounded.
const maxReplicas = 100

/** An answer: status code and JSON body. */
class Answer {
  constructor(readonly code: number, readonly body: unknown) {}
}

const failure = (code: number, reason: string, message: string, details?: Record<string, unknown>) =>
  new Answer(code, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    ...(details === undefined ? {} : { details }),
    code
  })

const success = (info: ResourceInfo, name: string) =>
  new Answer(200, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    details: { name, ...(info.group === "" ? {} : { group: info.group }), kind: info.plural }
  })

const qualifiedKind = (info: ResourceInfo) => (info.group === "" ? info.kind : `${info.kind}.${info.group}`)
const qualifiedPlural = (info: ResourceInfo) => (info.group === "" ? info.plural : `${info.plural}.${info.group}`)

const notFound = (info: ResourceInfo, name: string) =>
  failure(404, "NotFound", `${qualifiedPlural(info)} "${name}" not found`, {
    name,
    ...(info.group === "" ? {} : { group: info.group }),
    kind: info.plural
  })

interface FieldError {
  readonly field: string
  readonly reason: "FieldValueRequired" | "FieldValueInvalid"
  readonly message: string
}

const invalid = (info: ResourceInfo, name: string, errors: ReadonlyArray<FieldError>) =>
  failure(
    422,
    "Invalid",
    `${qualifiedKind(info)} "${name}" is invalid: ${errors.map((e) => `${e.field}: ${e.message}`).join(", ")}`,
    {
      name,
      ...(info.group === "" ? {} : { group: info.group }),
      kind: info.kind,
      causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field }))
    }
  )

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const labelName = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/
const configKey = /^[-._a-zA-Z0-9]+$/

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const copy = <A>(value: A): A => structuredClone(value)

const validLabelKey = (key: string) => {
  const slash = key.indexOf("/")
  const [prefix, name] = slash < 0 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)]
  if (prefix !== undefined && (prefix.length > 253 || !dnsSubdomain.test(prefix))) return false
  return name.length <= 63 && labelName.test(name)
}

const validateMetadata = (info: ResourceInfo, meta: Metadata, path = "metadata"): Array<FieldError> => {
  const errors: Array<FieldError> = []
  if (path === "metadata") {
    const pattern = info.plural === "namespaces" ? dnsLabel : dnsSubdomain
    const limit = info.plural === "namespaces" ? 63 : 253
    if (meta.name === "") errors.push({ field: "metadata.name", reason: "FieldValueRequired", message: "Required value: name or generateName is required" })
    else if (meta.name.length > limit || !pattern.test(meta.name)) {
      errors.push({ field: "metadata.name", reason: "FieldValueInvalid", message: `Invalid value: "${meta.name}": a lowercase RFC 1123 name must consist of lower case alphanumeric characters, '-' or '.'` })
    }
  }
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    if (!validLabelKey(key)) errors.push({ field: `${path}.labels`, reason: "FieldValueInvalid", message: `Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.'` })
    if (typeof value !== "string" || value.length > 63 || !labelValue.test(value)) {
      errors.push({ field: `${path}.labels`, reason: "FieldValueInvalid", message: `Invalid value: "${String(value)}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'` })
    }
  }
  for (const key of Object.keys(meta.annotations ?? {})) {
    if (!validLabelKey(key)) errors.push({ field: `${path}.annotations`, reason: "FieldValueInvalid", message: `Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.'` })
  }
  return errors
}

const validatePodSpec = (spec: unknown, path: string): Array<FieldError> => {
  if (!isRecord(spec)) return [{ field: path, reason: "FieldValueRequired", message: "Required value" }]
  const errors: Array<FieldError> = []
  const containers = spec["containers"]
  if (!Array.isArray(containers) || containers.length === 0) {
    return [{ field: `${path}.containers`, reason: "FieldValueRequired", message: "Required value" }]
  }
  const volumes = new Set(Array.isArray(spec["volumes"]) ? spec["volumes"].map((v) => (isRecord(v) ? v["name"] : undefined)) : [])
  const initContainers = Array.isArray(spec["initContainers"]) ? spec["initContainers"] : []
  const all = [...containers.map((c: unknown, i) => [`containers[${i}]`, c] as const), ...initContainers.map((c: unknown, i) => [`initContainers[${i}]`, c] as const)]
  all.forEach(([field, container]) => {
    const at = `${path}.${field}`
    if (!isRecord(container)) {
      errors.push({ field: at, reason: "FieldValueInvalid", message: "Invalid value" })
      return
    }
    if (typeof container["name"] !== "string" || !dnsLabel.test(container["name"])) errors.push({ field: `${at}.name`, reason: "FieldValueRequired", message: "Required value" })
    if (typeof container["image"] !== "string" || container["image"] === "") errors.push({ field: `${at}.image`, reason: "FieldValueRequired", message: "Required value" })
    const mounts = Array.isArray(container["volumeMounts"]) ? container["volumeMounts"] : []
    mounts.forEach((mount: unknown, j) => {
      if (!isRecord(mount) || !volumes.has(mount["name"])) {
        errors.push({ field: `${at}.volumeMounts[${j}].name`, reason: "FieldValueInvalid", message: "Not found" })
      }
    })
  })
  return errors
}

const validate = (info: ResourceInfo, object: KubeObject): Array<FieldError> => {
  const errors = validateMetadata(info, object.metadata)
  if (info.plural === "configmaps" && object["data"] !== undefined) {
    if (!isRecord(object["data"])) errors.push({ field: "data", reason: "FieldValueInvalid", message: "Invalid value" })
    else {
      for (const [key, value] of Object.entries(object["data"])) {
        if (!configKey.test(key)) errors.push({ field: "data", reason: "FieldValueInvalid", message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'` })
        if (typeof value !== "string") errors.push({ field: `data[${key}]`, reason: "FieldValueInvalid", message: "Invalid value: must be a string" })
      }
    }
  }
  if (info.plural === "secrets") {
    // As the API server checks a Secret: keys as a ConfigMap's, `data` values base64, `stringData` values strings.
    for (const field of ["data", "stringData"] as const) {
      const data = object[field]
      if (data === undefined) continue
      if (!isRecord(data)) {
        errors.push({ field, reason: "FieldValueInvalid", message: "Invalid value" })
        continue
      }
      for (const [key, value] of Object.entries(data)) {
        if (!configKey.test(key)) errors.push({ field: `${field}[${key}]`, reason: "FieldValueInvalid", message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'` })
        if (typeof value !== "string" || (field === "data" && !/^[A-Za-z0-9+/]*={0,2}$/.test(value))) {
          errors.push({ field: `${field}[${key}]`, reason: "FieldValueInvalid", message: "Invalid value: must be a base64 string" })
        }
      }
    }
  }
  if (info.plural === "pods") errors.push(...validatePodSpec(object["spec"], "spec"))
  if (info.plural === "deployments") {
    const spec = object["spec"]
    if (!isRecord(spec)) return [...errors, { field: "spec", reason: "FieldValueRequired", message: "Required value" }]
    const replicas = spec["replicas"] ?? 1
    if (typeof replicas !== "number" || !Number.isInteger(replicas) || replicas < 0 || replicas > maxReplicas) {
      errors.push({ field: "spec.replicas", reason: "FieldValueInvalid", message: `Invalid value: ${String(replicas)}: must be an integer from 0 to ${maxReplicas} (in this double)` })
    }
    const matchLabels = isRecord(spec["selector"]) && isRecord(spec["selector"]["matchLabels"]) ? spec["selector"]["matchLabels"] : undefined
    const template = isRecord(spec["template"]) ? spec["template"] : undefined
    const templateMeta = template !== undefined && isRecord(template["metadata"]) ? template["metadata"] as unknown as Metadata : undefined
    if (matchLabels === undefined || Object.keys(matchLabels).length === 0) {
      errors.push({ field: "spec.selector", reason: "FieldValueRequired", message: "Required value" })
    } else if (!Object.entries(matchLabels).every(([k, v]) => templateMeta?.labels?.[k] === v)) {
      errors.push({ field: "spec.template.metadata.labels", reason: "FieldValueInvalid", message: "Invalid value: `selector` does not match template `labels`" })
    }
    if (templateMeta !== undefined) errors.push(...validateMetadata(info, { ...templateMeta, name: "template" }, "spec.template.metadata"))
    errors.push(...validatePodSpec(template?.["spec"], "spec.template.spec"))
  }
  return errors
}

/** A label selector of the kinds kubectl and clients send: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`. */
const parseSelector = (selector: string): ((labels: Record<string, string>) => boolean) | undefined => {
  const terms: Array<(labels: Record<string, string>) => boolean> = []
  // Commas also separate the values inside "in (...)", so split only outside parentheses.
  const parts = selector.split(/,(?![^(]*\))/).map((p) => p.trim()).filter((p) => p !== "")
  for (const part of parts) {
    let m: RegExpMatchArray | null
    if ((m = part.match(/^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/)) !== null) {
      const [, key, op, list] = m as unknown as [string, string, string, string]
      const values = new Set(list.split(",").map((v) => v.trim()))
      terms.push(op === "in" ? (l) => l[key] !== undefined && values.has(l[key]) : (l) => l[key] === undefined || !values.has(l[key]))
    } else if ((m = part.match(/^([^\s!=]+)\s*!=\s*(\S*)$/)) !== null) {
      const [, key, value] = m as unknown as [string, string, string]
      terms.push((l) => l[key] !== value)
    } else if ((m = part.match(/^([^\s!=]+)\s*==?\s*(\S*)$/)) !== null) {
      const [, key, value] = m as unknown as [string, string, string]
      terms.push((l) => l[key] === value)
    } else if ((m = part.match(/^!\s*([^\s!=]+)$/)) !== null) {
      const key = m[1]!
      terms.push((l) => l[key] === undefined)
    } else if ((m = part.match(/^([^\s!=]+)$/)) !== null) {
      const key = m[1]!
      terms.push((l) => l[key] !== undefined)
    } else {
      return undefined
    }
  }
  return (labels) => terms.every((term) => term(labels))
}

/** RFC 7386 JSON merge patch; the double applies strategic merge patches the same way, which holds for maps. */
const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isRecord(patch)) return copy(patch)
  const result: Record<string, unknown> = isRecord(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = mergePatch(result[key], value)
  }
  return result
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z")
// The alphabet Kubernetes uses for generated name suffixes (no vowels, no look-alikes).
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"
const randomSuffix = () => Array.from({ length: 5 }, () => suffixAlphabet[randomInt(suffixAlphabet.length)]).join("")

type Route =
  | { readonly kind: "discovery"; readonly body: (port: number) => unknown }
  | { readonly kind: "resource"; readonly info: ResourceInfo; readonly namespace: string; readonly name: string | undefined }

const discovery = (body: (port: number) => unknown): Route => ({ kind: "discovery", body })

const resourceList = (groupVersion: string, infos: ReadonlyArray<ResourceInfo>) => ({
  kind: "APIResourceList",
  apiVersion: "v1",
  groupVersion,
  resources: infos.map((info) => ({
    name: info.plural,
    singularName: info.kind.toLowerCase(),
    namespaced: info.namespaced,
    kind: info.kind,
    verbs,
    shortNames: info.shortNames
  }))
})

const apiGroup = (name: string) => ({
  name,
  versions: [{ groupVersion: `${name}/v1`, version: "v1" }],
  preferredVersion: { groupVersion: `${name}/v1`, version: "v1" }
})

const route = (segments: ReadonlyArray<string>): Route | undefined => {
  const joined = segments.join("/")
  if (joined === "version") {
    return discovery(() => ({ major: "1", minor: "32", gitVersion: "v1.32.0-double", platform: "linux/amd64" }))
  }
  if (joined === "api") {
    return discovery((port) => ({
      kind: "APIVersions",
      versions: ["v1"],
      serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: `127.0.0.1:${port}` }]
    }))
  }
  if (joined === "apis") return discovery(() => ({ kind: "APIGroupList", apiVersion: "v1", groups: groups.map(apiGroup) }))
  if (joined === "api/v1") return discovery(() => resourceList("v1", infos.filter((info) => info.group === "")))
  const group = segments[0] === "apis" ? segments[1] : undefined
  if (group !== undefined && groups.includes(group)) {
    if (segments.length === 2) return discovery(() => ({ kind: "APIGroup", apiVersion: "v1", ...apiGroup(group) }))
    if (segments.length === 3 && segments[2] === "v1") return discovery(() => resourceList(`${group}/v1`, infos.filter((info) => info.group === group)))
  }

  // /api/v1/... (core group) or /apis/<group>/v1/..., then <plural>[/<name>] or namespaces/<namespace>/<plural>[/<name>].
  const [prefix, rest] = segments[0] === "api" && segments[1] === "v1"
    ? ["", segments.slice(2)]
    : group !== undefined && segments[2] === "v1"
    ? [group, segments.slice(3)]
    : [undefined, []]
  if (prefix === undefined) return undefined
  const inGroup = (plural: string | undefined) => infos.find((info) => info.plural === plural && info.group === prefix)
  const namespaced = rest[0] === "namespaces" && rest.length >= 3 ? inGroup(rest[2]) : undefined
  if (namespaced !== undefined && namespaced.namespaced && rest.length <= 4) {
    return { kind: "resource", info: namespaced, namespace: rest[1]!, name: rest[3] }
  }
  const clusterScoped = inGroup(rest[0])
  if (clusterScoped !== undefined && !clusterScoped.namespaced && rest.length <= 2) {
    return { kind: "resource", info: clusterScoped, namespace: "", name: rest[1] }
  }
  return undefined
}

/** Starts a double on 127.0.0.1 on a free port. */
export const start = async (options: Options = {}): Promise<KubeApiDouble> => {
  const objects = new Map<string, KubeObject>()
  const requests: Array<RecordedRequest> = []
  let revision = 0
  let forbidden = false
  let stalled = false
  let down = false

  const key = (plural: Plural, namespace: string, name: string) => `${plural}/${namespace}/${name}`
  const nextVersion = () => String(++revision)
  const inNamespace = (plural: Plural, namespace: string) =>
    [...objects.entries()].filter(([k]) => k.startsWith(`${plural}/${namespace}/`)).map(([, o]) => o)

  const put = (info: ResourceInfo, object: KubeObject) => {
    // The API server keeps a Secret's `stringData` as base64 `data` and never answers it.
    if (info.plural === "secrets") {
      const text = object["stringData"] as Record<string, string> | undefined
      if (text !== undefined) {
        object["data"] = {
          ...(object["data"] as Record<string, string> | undefined),
          ...Object.fromEntries(Object.entries(text).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")]))
        }
        delete object["stringData"]
      }
      object["type"] ??= "Opaque"
    }
    objects.set(key(info.plural, object.metadata.namespace ?? "", object.metadata.name), object)
  }

  const templateHash = (template: unknown) => createHash("sha256").update(JSON.stringify(template)).digest("hex").slice(0, 10)

  /** The Deployment controller: `replicas` pods of the current template, owned by the Deployment. */
  const reconcile = (deployment: KubeObject) => {
    const namespace = deployment.metadata.namespace!
    const spec = deployment["spec"] as { replicas?: number; template: { metadata?: Metadata; spec: unknown } }
    const replicas = spec.replicas ?? 1
    const hash = templateHash(spec.template)
    const owned = inNamespace("pods", namespace).filter((pod) => pod.metadata.ownerReferences?.some((ref) => ref.uid === deployment.metadata.uid))
    // A changed template replaces every pod of the old one, as a finished rollout would.
    const current = owned.filter((pod) => pod.metadata.labels?.["pod-template-hash"] === hash)
    for (const pod of owned) {
      if (!current.includes(pod)) objects.delete(key("pods", namespace, pod.metadata.name))
    }
    for (const extra of current.slice(replicas)) objects.delete(key("pods", namespace, extra.metadata.name))
    for (let i = current.length; i < replicas; i++) {
      let name = `${deployment.metadata.name}-${randomSuffix()}`
      for (let attempt = 0; attempt < 10 && objects.has(key("pods", namespace, name)); attempt++) {
        name = `${deployment.metadata.name}-${randomSuffix()}`
      }
      const labels = { ...spec.template.metadata?.labels, "pod-template-hash": hash }
      put(resources.pods, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name,
          namespace,
          uid: randomUUID(),
          resourceVersion: nextVersion(),
          creationTimestamp: now(),
          labels,
          annotations: { ...spec.template.metadata?.annotations },
          ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: deployment.metadata.name, uid: deployment.metadata.uid!, controller: true }]
        },
        spec: copy(spec.template.spec),
        status: { phase: "Running", startTime: now() }
      })
    }
    // Pods run the moment they exist here, so the rollout is always complete.
    const at = now()
    deployment["status"] = {
      observedGeneration: deployment.metadata.generation,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      conditions: [
        { type: "Available", status: "True", reason: "MinimumReplicasAvailable", message: "Deployment has minimum availability.", lastUpdateTime: at, lastTransitionTime: at },
        { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable", message: `ReplicaSet "${deployment.metadata.name}-${hash}" has successfully progressed.`, lastUpdateTime: at, lastTransitionTime: at }
      ]
    }
  }

  /** A rollout that cannot go on: its current pods wait for `reason`, the Deployment has none available. */
  const stickRollout = (deployment: KubeObject, reason: string, message: string) => {
    const namespace = deployment.metadata.namespace!
    const spec = deployment["spec"] as { replicas?: number; template: unknown }
    const replicas = spec.replicas ?? 1
    const hash = templateHash(spec.template)
    for (const pod of inNamespace("pods", namespace)) {
      if (pod.metadata.labels?.["pod-template-hash"] !== hash || !pod.metadata.ownerReferences?.some((ref) => ref.uid === deployment.metadata.uid)) continue
      const containers = ((pod["spec"] as { containers?: Array<{ name: string; image: string }> }).containers ?? [])
      pod["status"] = {
        phase: "Pending",
        startTime: now(),
        containerStatuses: containers.map((c) => ({
          name: c.name,
          image: c.image,
          imageID: "",
          ready: false,
          started: false,
          restartCount: 0,
          state: { waiting: { reason, message } }
        }))
      }
      pod.metadata.resourceVersion = nextVersion()
    }
    const at = now()
    deployment["status"] = {
      observedGeneration: deployment.metadata.generation,
      replicas,
      updatedReplicas: replicas,
      unavailableReplicas: replicas,
      conditions: [
        { type: "Available", status: "False", reason: "MinimumReplicasUnavailable", message: "Deployment does not have minimum availability.", lastUpdateTime: at, lastTransitionTime: at },
        { type: "Progressing", status: "True", reason: "ReplicaSetUpdated", message: `ReplicaSet "${deployment.metadata.name}-${hash}" is progressing.`, lastUpdateTime: at, lastTransitionTime: at }
      ]
    }
    deployment.metadata.resourceVersion = nextVersion()
  }

  const removeNamespaceContent = (namespace: string) => {
    for (const info of infos.filter((i) => i.namespaced)) {
      for (const object of inNamespace(info.plural, namespace)) objects.delete(key(info.plural, namespace, object.metadata.name))
    }
  }

  /** Fills in what the server owns on a new object. */
  const admit = (info: ResourceInfo, object: KubeObject, namespace: string) => {
    object.apiVersion = apiVersionOf(info)
    object.kind = info.kind
    if (info.namespaced) object.metadata.namespace = namespace
    object.metadata.uid = randomUUID()
    object.metadata.creationTimestamp = now()
    object.metadata.resourceVersion = nextVersion()
    if (info.plural === "namespaces") {
      object.metadata.labels = { ...object.metadata.labels, "kubernetes.io/metadata.name": object.metadata.name }
      object["spec"] = { finalizers: ["kubernetes"] }
      object["status"] = { phase: "Active" }
    }
    if (info.plural === "deployments") object.metadata.generation = 1
    if (info.plural === "pods") object["status"] = { phase: "Running", startTime: now() }
  }

  /** Carries what the server owns from the stored object to its replacement. */
  const carryOver = (info: ResourceInfo, next: KubeObject, previous: KubeObject) => {
    next.apiVersion = previous.apiVersion
    next.kind = previous.kind
    next.metadata = {
      ...next.metadata,
      name: previous.metadata.name,
      uid: previous.metadata.uid!,
      creationTimestamp: previous.metadata.creationTimestamp!,
      resourceVersion: nextVersion()
    }
    if (info.namespaced) next.metadata.namespace = previous.metadata.namespace!
    // Status is a subresource: writes to the main resource never change it.
    if (previous["status"] !== undefined) next["status"] = previous["status"]
    if (info.plural === "namespaces") {
      next.metadata.labels = { ...next.metadata.labels, "kubernetes.io/metadata.name": previous.metadata.name }
      next["spec"] = previous["spec"]
    }
    if (info.plural === "deployments") {
      const changed = JSON.stringify(next["spec"]) !== JSON.stringify(previous["spec"])
      next.metadata.generation = (previous.metadata.generation ?? 1) + (changed ? 1 : 0)
    }
  }

  const parseObject = (info: ResourceInfo, text: string): KubeObject | Answer => {
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch (error) {
      return failure(400, "BadRequest", `the body of the request was in an unknown format: ${String(error)}`)
    }
    if (!isRecord(body)) return failure(400, "BadRequest", "the body of the request must be a JSON object")
    if (body["kind"] !== undefined && body["kind"] !== info.kind) {
      return failure(400, "BadRequest", `the API version in the data (${String(body["apiVersion"])}) does not match the expected API version (${apiVersionOf(info)})`)
    }
    const metadata = isRecord(body["metadata"]) ? body["metadata"] : {}
    return { ...body, apiVersion: apiVersionOf(info), kind: info.kind, metadata: { ...metadata, name: typeof metadata["name"] === "string" ? metadata["name"] : "" } }
  }

  const namespaceMismatch = (info: ResourceInfo, object: KubeObject, namespace: string) =>
    info.namespaced && object.metadata.namespace !== undefined && object.metadata.namespace !== namespace
      ? failure(400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request")
      : undefined

  const list = (info: ResourceInfo, namespace: string, query: URLSearchParams): Answer => {
    const selector = query.get("labelSelector")
    const matches = selector === null || selector === "" ? () => true : parseSelector(selector)
    if (matches === undefined) return failure(400, "BadRequest", `unable to parse requirement: invalid label selector "${selector}"`)
    const items = inNamespace(info.plural, info.namespaced ? namespace : "")
      .filter((o) => matches(o.metadata.labels ?? {}))
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
      .map(copy)
    return new Answer(200, { kind: `${info.kind}List`, apiVersion: apiVersionOf(info), metadata: { resourceVersion: String(revision) }, items })
  }

  const create = (info: ResourceInfo, namespace: string, object: KubeObject): Answer => {
    const mismatch = namespaceMismatch(info, object, namespace)
    if (mismatch !== undefined) return mismatch
    if (info.namespaced && !objects.has(key("namespaces", "", namespace))) return notFound(resources.namespaces, namespace)
    const errors = validate(info, object)
    if (errors.length > 0) return invalid(info, object.metadata.name, errors)
    const name = object.metadata.name
    if (objects.has(key(info.plural, namespace, name))) {
      return failure(409, "AlreadyExists", `${qualifiedPlural(info)} "${name}" already exists`, {
        name,
        ...(info.group === "" ? {} : { group: info.group }),
        kind: info.plural
      })
    }
    admit(info, object, namespace)
    if (info.plural === "deployments") reconcile(object)
    put(info, object)
    return new Answer(201, copy(object))
  }

  const update = (info: ResourceInfo, namespace: string, name: string, previous: KubeObject, next: KubeObject): Answer => {
    const mismatch = namespaceMismatch(info, next, namespace)
    if (mismatch !== undefined) return mismatch
    if (next.metadata.name !== name) {
      return failure(400, "BadRequest", `the name of the object (${next.metadata.name}) does not match the name on the URL (${name})`)
    }
    const wanted = next.metadata.resourceVersion
    if (wanted !== undefined && wanted !== "" && wanted !== previous.metadata.resourceVersion) {
      return failure(409, "Conflict", `Operation cannot be fulfilled on ${qualifiedPlural(info)} "${name}": the object has been modified; please apply your changes to the latest version and try again`, {
        name,
        ...(info.group === "" ? {} : { group: info.group }),
        kind: info.plural
      })
    }
    const errors = validate(info, next)
    if (errors.length > 0) return invalid(info, name, errors)
    carryOver(info, next, previous)
    if (info.plural === "deployments") reconcile(next)
    put(info, next)
    return new Answer(200, copy(next))
  }

  const remove = (info: ResourceInfo, namespace: string, name: string, previous: KubeObject): Answer => {
    objects.delete(key(info.plural, namespace, name))
    const gone = { ...copy(previous), metadata: { ...copy(previous.metadata), deletionTimestamp: now(), resourceVersion: nextVersion() } }
    if (info.plural === "namespaces") {
      removeNamespaceContent(name)
      return new Answer(200, { ...gone, status: { phase: "Terminating" } })
    }
    if (info.plural === "deployments") {
      for (const pod of inNamespace("pods", namespace)) {
        if (pod.metadata.ownerReferences?.some((ref) => ref.uid === previous.metadata.uid)) objects.delete(key("pods", namespace, pod.metadata.name))
      }
      return success(info, name)
    }
    if (info.plural === "pods") {
      const owner = previous.metadata.ownerReferences?.find((ref) => ref.controller === true)
      const deployment = owner === undefined ? undefined : objects.get(key("deployments", namespace, owner.name))
      if (deployment !== undefined && deployment.metadata.uid === owner?.uid) reconcile(deployment)
      return new Answer(200, gone)
    }
    return success(info, name)
  }

  /** The stored object with a merge patch applied; the patch carries no resourceVersion precondition unless it names one. */
  const patched = (stored: KubeObject, patch: Record<string, unknown>) => {
    const next = mergePatch(copy(stored), patch) as KubeObject
    const precondition = isRecord(patch["metadata"]) ? patch["metadata"]["resourceVersion"] : undefined
    next.metadata = { ...next.metadata, resourceVersion: typeof precondition === "string" ? precondition : "" }
    return next
  }

  /**
   * Server-side apply (`kubectl apply --server-side`): creates the object, or
   * merges the applied fields into it as a merge patch would (maps merged,
   * lists replaced). Unlike a real server it does not track which manager
   * owns which field, so it never reports a conflict and a field dropped from
   * the applied object stays; it only records the manager. The body must be
   * JSON (YAML's JSON subset, which is what kubectl sends).
   */
  const apply = (info: ResourceInfo, namespace: string, name: string, stored: KubeObject | undefined, query: URLSearchParams, text: string): Answer => {
    const manager = query.get("fieldManager")
    if (manager === null || manager === "") {
      return failure(400, "BadRequest", "PATCH requests with the apply content type must have a fieldManager")
    }
    const object = parseObject(info, text)
    if (object instanceof Answer) return object
    if (object.metadata.name !== name) {
      return failure(400, "BadRequest", `the name of the object (${object.metadata.name}) does not match the name on the URL (${name})`)
    }
    const managedFields = [{ manager, operation: "Apply", apiVersion: apiVersionOf(info), time: now(), fieldsType: "FieldsV1" }]
    const applied = { ...object, metadata: { ...object.metadata, managedFields } }
    if (stored === undefined) return create(info, namespace, applied)
    return update(info, namespace, name, stored, patched(stored, applied))
  }

  const handle = (method: string, target: Route & { kind: "resource" }, query: URLSearchParams, text: string, contentType: string | undefined): Answer => {
    const { info, namespace, name } = target
    if (query.has("dryRun")) return failure(400, "BadRequest", "dryRun is not supported by this API server double")
    // Real servers also take protobuf and YAML; this one speaks JSON only and says so, as they do for unknown types.
    const type = contentType?.split(";")[0]?.trim()
    if ((method === "POST" || method === "PUT") && type !== undefined && type !== "application/json") {
      return failure(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: application/json (this double); got ${type}`)
    }
    if (name === undefined) {
      if (method === "GET") return list(info, namespace, query)
      if (method === "POST") {
        const object = parseObject(info, text)
        return object instanceof Answer ? object : create(info, namespace, object)
      }
      return failure(405, "MethodNotAllowed", `the server does not allow this method on the requested resource`)
    }
    const stored = objects.get(key(info.plural, namespace, name))
    if (method === "GET") return stored === undefined ? notFound(info, name) : new Answer(200, copy(stored))
    if (method === "DELETE") return stored === undefined ? notFound(info, name) : remove(info, namespace, name, stored)
    if (method === "PUT") {
      if (stored === undefined) return notFound(info, name)
      const next = parseObject(info, text)
      return next instanceof Answer ? next : update(info, namespace, name, stored, next)
    }
    if (method === "PATCH") {
      if (type === "application/apply-patch+yaml") return apply(info, namespace, name, stored, query, text)
      if (type !== "application/merge-patch+json" && type !== "application/strategic-merge-patch+json") {
        return failure(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml (this double); got ${String(type)}`)
      }
      if (stored === undefined) return notFound(info, name)
      let patch: unknown
      try {
        patch = JSON.parse(text)
      } catch (error) {
        return failure(400, "BadRequest", `error decoding patch: ${String(error)}`)
      }
      if (!isRecord(patch)) return failure(400, "BadRequest", "error decoding patch: a merge patch must be a JSON object")
      return update(info, namespace, name, stored, patched(stored, patch))
    }
    return failure(405, "MethodNotAllowed", `the server does not allow this method on the requested resource`)
  }

  const readBody = async (req: http.IncomingMessage): Promise<string | Answer> => {
    const chunks: Array<Buffer> = []
    let size = 0
    for await (const chunk of req) {
      size += (chunk as Buffer).length
      if (size > bodyLimit) return failure(413, "RequestEntityTooLarge", "the request body is too large")
      chunks.push(chunk as Buffer)
    }
    return Buffer.concat(chunks).toString("utf8")
  }

  const send = (res: http.ServerResponse, answer: Answer) => {
    const text = JSON.stringify(answer.body)
    res.writeHead(answer.code, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    res.end(text)
  }

  let port = 0
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      const method = req.method ?? "GET"
      requests.push({
        method,
        path: `${url.pathname}${url.search}`,
        authorization: req.headers.authorization,
        contentType: req.headers["content-type"]
      })
      const text = await readBody(req)
      if (text instanceof Answer) return send(res, text)
      if (stalled) return undefined
      if (down) return send(res, failure(503, "ServiceUnavailable", "the server is currently unable to handle the request"))
      if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
        return send(res, failure(401, "Unauthorized", "Unauthorized"))
      }
      const segments = url.pathname.split("/").filter((s) => s !== "").map(decodeURIComponent)
      const target = route(segments)
      if (forbidden) {
        const what = target?.kind === "resource" ? target.info : undefined
        const scope = what?.namespaced === true ? `in the namespace "${target!.kind === "resource" ? target!.namespace : ""}"` : "at the cluster scope"
        return send(res, failure(403, "Forbidden", `${what?.plural ?? "resource"} is forbidden: User "system:serviceaccount:hosting:platform" cannot ${method.toLowerCase()} resource "${what?.plural ?? url.pathname}" in API group "${what?.group ?? ""}" ${scope}`, {
          kind: what?.plural ?? "",
          ...(target?.kind === "resource" && target.name !== undefined ? { name: target.name } : {})
        }))
      }
      if (target === undefined) return send(res, failure(404, "NotFound", "the server could not find the requested resource"))
      if (target.kind === "discovery") {
        return send(res, method === "GET" ? new Answer(200, target.body(port)) : failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource"))
      }
      return send(res, handle(method, target, url.searchParams, text, req.headers["content-type"]))
    })().catch((error: unknown) => {
      if (!res.headersSent) send(res, failure(500, "InternalError", `an error on the server ("${String(error)}") has prevented the request from succeeding`))
    })
  }

  const server = options.tls === undefined
    ? http.createServer(listener)
    : https.createServer({ key: options.tls.key, cert: options.tls.cert }, listener)
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  port = (server.address() as AddressInfo).port

  return {
    url: `${options.tls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
    port,
    requests,
    stored: (plural, namespace, name) => {
      const found = objects.get(key(plural, namespace, name))
      return found === undefined ? undefined : copy(found)
    },
    storedAll: (plural) => [...objects.entries()].filter(([k]) => k.startsWith(`${plural}/`)).map(([, o]) => copy(o)),
    forbidAll: (on) => {
      forbidden = on
    },
    outage: (on) => {
      down = on
    },
    stall: (on) => {
      stalled = on
    },
    setDeploymentStatus: (namespace, name, status) => {
      const deployment = objects.get(key("deployments", namespace, name))
      if (deployment === undefined) throw new Error(`setDeploymentStatus: no Deployment ${namespace}/${name}`)
      deployment["status"] = copy(status)
      deployment.metadata.resourceVersion = nextVersion()
    },
    setPodStatus: (namespace, name, status) => {
      const pod = objects.get(key("pods", namespace, name))
      if (pod === undefined) throw new Error(`setPodStatus: no pod ${namespace}/${name}`)
      pod["status"] = copy(status)
      pod.metadata.resourceVersion = nextVersion()
    },
    failRollout: (namespace, reason, message) => {
      for (const deployment of inNamespace("deployments", namespace)) stickRollout(deployment, reason, message)
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)))
        // Held (stalled) and kept-alive connections would otherwise keep close() waiting.
        server.closeAllConnections()
      })
  }
}

/** A double that lives as long as the enclosing scope. */
export const make = (options: Options = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => start(options)),
    (double) => Effect.promise(() => double.close())
  )
