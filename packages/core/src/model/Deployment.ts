/**
 * Deployments: an account running a build of an agent (its own or a
 * published one of another account) in a cluster namespace.
 */
import { Schema } from "effect"
import { hiddenEnvValue, withEnvHidden } from "./Agent.js"
import { AccountId, AccountName, AgentName, BuildId, ChannelName, VersionRange } from "./Ids.js"
import { EnvOverrides, overridesHidden } from "./Secret.js"
import * as Trusted from "./Trusted.js"

/** Identifier of a deployment. */
export const DeploymentId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, {
    message: () => "must be 1-128 letters, digits, dots, underscores or hyphens"
  }),
  Schema.brand("DeploymentId")
)
export type DeploymentId = typeof DeploymentId.Type

/**
 * What a deployment follows: a semver range or a channel of its agent. When
 * a newer match is published or the channel moves, the deployment rolls
 * forward to it.
 */
export const Follow = Schema.Union(
  Schema.Struct({ range: VersionRange }),
  Schema.Struct({ channel: ChannelName })
)
export type Follow = typeof Follow.Type

/** How a follow reads in a sentence: `range ^1.2` or `channel stable`. */
export const describeFollow = (follow: Follow) => "range" in follow ? `range ${follow.range}` : `channel ${follow.channel}`

/**
 * What a send does while a reply of its conversation is still streaming:
 * `reject` it (409 `reply_in_progress`), `queue` it (its reply starts when
 * the previous one ends) or `interrupt` the running reply (stored as
 * `cancelled`) and start the new one.
 */
export const ConcurrentSend = Schema.Literal("reject", "queue", "interrupt")
export type ConcurrentSend = typeof ConcurrentSend.Type

/** The strategy of a deployment that chose none: the contract gives 409 to the message limit alone. */
export const defaultConcurrentSend: ConcurrentSend = "interrupt"

/**
 * Statuses of a deployment record. A live deployment follows its workload's
 * rollout: `pending` (deployed, not yet seen in the cluster), `progressing`,
 * `available` or `failed` (with the cluster's reason); an ended one is
 * `superseded` (another deploy replaced it) or `undeployed`. Records written
 * before rollouts were read said `running` (migration 0015 made the live ones
 * `pending`, so that they are read again).
 */
export const DeploymentStatus = {
  pending: "pending",
  progressing: "progressing",
  available: "available",
  failed: "failed",
  superseded: "superseded",
  undeployed: "undeployed"
} as const

/**
 * What a list of an account's deployments may keep: `live` (not ended) or
 * `ended`, or one status.
 */
export const StatusFilter = Schema.Literal("live", "ended", ...Object.values(DeploymentStatus))
export type StatusFilter = typeof StatusFilter.Type

/** The most deployments a page of an account's list holds, and how many it holds when the caller does not say. */
export const maxPageSize = 200
export const defaultPageSize = 50

/** Statuses of live deployments whose rollout has not settled: the platform reads the cluster until it does. */
export const unsettledStatuses: ReadonlyArray<string> = [DeploymentStatus.pending, DeploymentStatus.progressing]

/** The settings of a deployment, as the API shows and takes them. */
export class DeploymentSettings extends Schema.Class<DeploymentSettings>("DeploymentSettings")({
  concurrent_send: ConcurrentSend
}) {}

/** A deployment as stored. */
export class DeploymentRecord extends Schema.Class<DeploymentRecord>("DeploymentRecord")({
  id: DeploymentId,
  /** The deploying account. */
  account_id: AccountId,
  account: AccountName,
  /** The account that publishes the agent, and the agent's name. */
  publisher_id: AccountId,
  publisher: AccountName,
  agent_name: AgentName,
  build_id: BuildId,
  namespace: Schema.String,
  status: Schema.String,
  /** Why the status is what it is, in the cluster's word (`ImagePullBackOff`), when it gave one. */
  status_reason: Schema.optional(Schema.String),
  /** The cluster's sentence about the status, when it gave one. */
  status_message: Schema.optional(Schema.String),
  deployed_at: Schema.DateTimeUtc,
  undeployed_at: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  spec: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** The deployment this one rolled back, when it was made by a rollback. */
  rolled_back_from: Schema.optional(DeploymentId),
  /** The range or channel this deployment follows, when it follows one. */
  follow: Schema.optional(Follow),
  /** The deployment this one replaced by following its range or channel forward. */
  rolled_forward_from: Schema.optional(DeploymentId),
  /** The deployment's strategy for a send while a reply streams; absent: `defaultConcurrentSend`. */
  concurrent_send: Schema.optional(ConcurrentSend),
  /** The env the deploy set over the spec's: plain values, and for secrets only the reference (never a value). */
  env: Schema.optional(EnvOverrides)
}) {}

/** Where to reach a deployment beyond its record: absolute URLs under the API's public base URL. */
export class DeploymentLinks extends Schema.Class<DeploymentLinks>("DeploymentLinks")({
  /** The deployment's A2A agent card (docs/protocols.md): what an A2A client is pointed at. */
  a2a_card: Schema.String,
  /** The deployment's MCP server (docs/protocols.md): what an MCP client connects to. */
  mcp: Schema.String
}) {}

/** A deployment as the API shows it (interface.md "Deployment record", plus `account` and `agent`). */
export class Deployment extends Schema.Class<Deployment>("Deployment")({
  id: DeploymentId,
  /** The deploying account. */
  account: AccountName,
  /** The agent it runs, as `<publisher>/<name>`. */
  agent: Schema.String,
  agent_name: AgentName,
  build_id: BuildId,
  namespace: Schema.String,
  status: Schema.String,
  /** Present when the cluster gave a reason for the status, such as `ImagePullBackOff` for `failed`. */
  status_reason: Schema.optional(Schema.String),
  /** Present when the cluster said more about the status. */
  status_message: Schema.optional(Schema.String),
  deployed_at: Schema.DateTimeUtc,
  undeployed_at: Schema.NullOr(Schema.DateTimeUtc),
  spec: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** Present on a deployment made by a rollback: the deployment it rolled back. */
  rolled_back_from: Schema.optional(DeploymentId),
  /** Present on a deployment that follows a semver range or a channel of its agent. */
  follow: Schema.optional(Follow),
  /** Present on a deployment made by following: the deployment it rolled forward from. */
  rolled_forward_from: Schema.optional(DeploymentId),
  /** The deployment's settings (`PUT /deployments/{deploymentId}/settings`). */
  settings: DeploymentSettings,
  /**
   * Present when the deploy set env over the spec's: name to plain value or
   * `{ secret: NAME }`; outside the deploying account every value is hidden.
   */
  env: Schema.optional(EnvOverrides),
  /** Present while the deployment is live: where else to reach it (set by the HTTP layer, which knows the public URL). */
  links: Schema.optional(DeploymentLinks)
}) {}

/** The settings of a stored deployment, the defaults filled in. */
export const settingsOf = (record: DeploymentRecord): DeploymentSettings =>
  Trusted.make(DeploymentSettings, { concurrent_send: record.concurrent_send ?? defaultConcurrentSend })

/**
 * The API view of a stored deployment; with `hideEnv` (a caller outside the
 * agent's account, see Agent.withEnvHidden), without the values of the spec's `env`;
 * with `hideOverrides` (a caller outside the deploying account), without the
 * values of the deploy's own `env`.
 */
export const toView = (record: DeploymentRecord, hideEnv = false, hideOverrides = false): Deployment =>
  Trusted.make(Deployment, {
    id: record.id,
    account: record.account,
    agent: `${record.publisher}/${record.agent_name}`,
    agent_name: record.agent_name,
    build_id: record.build_id,
    namespace: record.namespace,
    status: record.status,
    ...(record.status_reason === undefined ? {} : { status_reason: record.status_reason }),
    ...(record.status_message === undefined ? {} : { status_message: record.status_message }),
    deployed_at: record.deployed_at,
    undeployed_at: record.undeployed_at._tag === "Some" ? record.undeployed_at.value : null,
    spec: hideEnv ? withEnvHidden(record.spec) : record.spec,
    ...(record.rolled_back_from === undefined ? {} : { rolled_back_from: record.rolled_back_from }),
    ...(record.follow === undefined ? {} : { follow: record.follow }),
    ...(record.rolled_forward_from === undefined ? {} : { rolled_forward_from: record.rolled_forward_from }),
    settings: settingsOf(record),
    ...(record.env === undefined ? {} : { env: hideOverrides ? overridesHidden(record.env, hiddenEnvValue) : record.env })
    // A view of a stored record: the schema checked it on the way in, and the HTTP layer encodes the view with it.
  })

/** FNV-1a, 32 bits, as 8 hex digits: a short, stable suffix for names that must be shortened. */
const fnv1a = (text: string) => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, "0")
}

/** Longest Kubernetes namespace name (a DNS-1123 label). */
export const maxNamespaceLength = 63

/**
 * The namespace of an account's deployment of an agent: `<account>-<agent>`
 * for its own agents, `<account>-<publisher>-<agent>` for another account's.
 * Names over 63 characters keep their first 54 and end with `-` and a hash of
 * the whole name, so they stay unique, stable and DNS-1123 safe.
 */
export const namespaceFor = (account: AccountName, publisher: AccountName, agent: AgentName): string => {
  const full = account === publisher ? `${account}-${agent}` : `${account}-${publisher}-${agent}`
  if (full.length <= maxNamespaceLength) return full
  return `${full.slice(0, maxNamespaceLength - 9).replace(/-+$/, "")}-${fnv1a(full)}`
}

/**
 * The value of `labelKeys.managedBy` on everything the platform makes in a
 * cluster; a cluster adapter takes over or removes no namespace without it.
 */
export const managedByValue = "hosting"

/** Label keys put on every cluster object of a deployment. */
export const labelKeys = {
  managedBy: "app.kubernetes.io/managed-by",
  account: "hosting.dev/account",
  publisher: "hosting.dev/publisher",
  agent: "hosting.dev/agent",
  build: "hosting.dev/build",
  deployment: "hosting.dev/deployment"
} as const

/** Label values must be at most 63 characters of [A-Za-z0-9._-], starting and ending alphanumeric. */
export const labelValue = (value: string): string => {
  const cleaned = value.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "")
  return cleaned.length <= 63 ? cleaned : `${cleaned.slice(0, 54).replace(/[^A-Za-z0-9]+$/, "")}-${fnv1a(value)}`
}
