/**
 * What the deployment use cases are asked: a deploy, a rollback, a change of
 * settings; how a new deployment came about, and the audit line that says so.
 */
import { Option } from "effect"
import type * as Agent from "../../model/Agent.js"
import { type ConcurrentSend, type DeploymentId, describeFollow, type Follow } from "../../model/Deployment.js"
import type { AccountName, AgentName, BuildId, ChannelName, SemVer, VersionRange } from "../../model/Ids.js"
import type { EnvOverrides } from "../../model/Secret.js"

/**
 * What to deploy: a build, a published version or semver range, a channel,
 * or (none of them) the highest published version that is not yanked.
 */
export interface DeployInput {
  readonly account: AccountName
  readonly name: AgentName
  readonly build_id?: BuildId | undefined
  /** An exact version, or a semver range whose newest installable match is deployed. */
  readonly version?: VersionRange | SemVer | undefined
  readonly channel?: ChannelName | undefined
  /** Keep following the range or channel: roll forward when it moves. */
  readonly follow?: boolean | undefined
  /** The deploying account; the agent's own account when absent. */
  readonly into?: AccountName | undefined
  /** Env set over the spec's: plain values, or references to secrets of the deploying account. */
  readonly env?: EnvOverrides | undefined
}

/** How a new deployment came about, beside what it runs. */
export interface Origin {
  readonly rolled_back_from?: DeploymentId | undefined
  readonly follow?: Follow | undefined
  readonly rolled_forward_from?: DeploymentId | undefined
  /** Env set over the spec's (a deploy's own, or the one a rollback or roll forward carries on). */
  readonly env?: EnvOverrides | undefined
}

/** Where a rollback goes: a build or version of the deployment's history, or (neither) the build before it. */
export interface RollbackTarget {
  readonly build_id?: BuildId | undefined
  readonly version?: SemVer | undefined
}

/** A change of a deployment's settings (`PUT /deployments/{deploymentId}/settings`). */
export interface SettingsInput {
  readonly concurrent_send: ConcurrentSend
}

/**
 * The audit line of a deploy: how it came about (a deploy, a rollback, a roll
 * forward along a channel or range), what it runs, what it follows, and the
 * names (never the values) of the env the deploy set.
 */
export const deployedLine = (
  origin: Origin,
  publisher: AccountName,
  agent: Agent.AgentRecord,
  build: Agent.Build,
  id: DeploymentId,
  overrides: EnvOverrides | undefined
) => {
  const how = origin.rolled_back_from !== undefined
    ? `Rolled ${origin.rolled_back_from} back: deployed`
    : origin.rolled_forward_from !== undefined && origin.follow !== undefined
    ? `Rolled ${origin.rolled_forward_from} forward along its ${describeFollow(origin.follow)}: deployed`
    : "Deployed"
  const following = origin.follow === undefined || origin.rolled_forward_from !== undefined
    ? ""
    : `, following its ${describeFollow(origin.follow)}`
  const version = Option.match(build.version, { onNone: () => "", onSome: (v) => ` (${v})` })
  // Names only: the values (and which secret each reads) stay on the record, for the account's members.
  const env = overrides === undefined ? "" : ` Env set by the deploy: ${Object.keys(overrides).sort().join(", ")}.`
  return `${how} ${publisher}/${agent.name} build ${build.build_id}${version} as ${id}${following}.${env}`
}
