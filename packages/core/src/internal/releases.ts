/**
 * Which build a deploy, a channel or a follow means: one place that turns a
 * build id, a version, a semver range or a channel into a build, and the
 * `deployment.changed` events that tell accounts about a deployment.
 */
import { Effect, Option, Schema } from "effect"
import * as semver from "semver"
import * as Agent from "../model/Agent.js"
import { type DeploymentRecord, describeFollow, type Follow } from "../model/Deployment.js"
import { BuildNotFound, ChannelNotFound, InvalidRequest, NoMatchingVersion, VersionNotFound, VersionYanked } from "../model/Errors.js"
import type { NewEvent } from "../model/Event.js"
import { type AccountId, type BuildId, type ChannelName, latestChannel, SemVer, type VersionRange } from "../model/Ids.js"
import type { AgentStore } from "../ports/AgentStore.js"
import type { DeploymentStore } from "../ports/DeploymentStore.js"
import { orFail } from "./lookup.js"

const isSemVer = Schema.is(SemVer)

/** A version or range that is exactly one version (`1.4.0`): looked up as that version, not matched as a range. */
export const exactVersion = (text: string): Option.Option<SemVer> => isSemVer(text) ? Option.some(text) : Option.none()

/** What names the build to run: a version or range, a channel, or `latest`. */
export type Selector =
  | { readonly version: VersionRange | SemVer }
  | { readonly channel: ChannelName }

/** The selector a follow keeps choosing with. */
export const selectorOf = (follow: Follow): Selector => "range" in follow ? { version: follow.range } : { channel: follow.channel }

/** Refuses a yanked build where an installable one is needed. */
export const installable = (ref: string, build: Agent.Build) =>
  build.yanked === undefined
    ? Effect.succeed(build)
    : Effect.fail(new VersionYanked({ agent: ref, version: Option.getOrElse(build.version, () => ""), reason: build.yanked.reason }))

/**
 * The published build a selector names for an agent: an exact version (404
 * when unpublished, 409 when yanked), the newest installable version in a
 * range, or the version a channel points to (`latest`: the newest installable).
 */
export const resolve = Effect.fnUntraced(function*(agents: AgentStore["Type"], agent: Agent.AgentRecord, selector: Selector) {
  const ref = `${agent.account}/${agent.name}`
  if ("version" in selector) {
    const exact = exactVersion(selector.version)
    if (Option.isSome(exact)) {
      const build = yield* agents.findBuildByVersion(agent.id, exact.value)
      if (Option.isNone(build)) return yield* new VersionNotFound({ agent: ref, version: exact.value })
      return yield* installable(ref, build.value)
    }
    const candidates = Agent.installableOf(yield* agents.listBuilds(agent.id))
    const best = semver.maxSatisfying(candidates.map((b) => Option.getOrThrow(b.version)), selector.version)
    const build = candidates.find((b) => Option.getOrThrow(b.version) === best)
    if (build === undefined) return yield* new NoMatchingVersion({ agent: ref, range: selector.version })
    return build
  }
  if (selector.channel === latestChannel) {
    const latest = Agent.installableOf(yield* agents.listBuilds(agent.id))[0]
    if (latest === undefined) return yield* new VersionNotFound({ agent: ref, version: "" })
    return latest
  }
  const channel = (yield* agents.listChannels(agent.id)).find((c) => c.name === selector.channel)
  if (channel === undefined) return yield* new ChannelNotFound({ agent: ref, channel: selector.channel })
  const build = yield* agents.findBuildByVersion(agent.id, channel.version)
  if (Option.isNone(build)) return yield* new VersionNotFound({ agent: ref, version: channel.version })
  return yield* installable(ref, build.value)
})

/** A `deployment.changed` event about a deployment for each account named (duplicates dropped). */
export const deploymentChanged = (
  record: DeploymentRecord,
  accounts: ReadonlyArray<AccountId>,
  warning?: string,
  extra: Readonly<Record<string, unknown>> = {}
): ReadonlyArray<NewEvent> =>
  [...new Set(accounts)].map((account_id) => ({
    account_id,
    type: "deployment.changed" as const,
    data: {
      deployment_id: record.id,
      agent: `${record.publisher}/${record.agent_name}`,
      build_id: record.build_id,
      namespace: record.namespace,
      status: record.status,
      ...(record.status_reason === undefined ? {} : { status_reason: record.status_reason }),
      ...(record.status_message === undefined ? {} : { status_message: record.status_message }),
      ...(record.rolled_back_from === undefined ? {} : { rolled_back_from: record.rolled_back_from }),
      ...(record.follow === undefined ? {} : { follow: describeFollow(record.follow) }),
      ...(record.rolled_forward_from === undefined ? {} : { rolled_forward_from: record.rolled_forward_from }),
      ...(warning === undefined ? {} : { warning }),
      ...extra
    }
  }))

/** Accounts whose stream receives the build events of an agent: the publisher and every account deploying it. */
export const buildEventRecipients = (deployments: DeploymentStore["Type"], agent: Agent.AgentRecord) =>
  Effect.map(deployments.accountsDeploying(agent.account_id, agent.name), (deploying) => [
    ...new Set([agent.account_id, ...deploying])
  ])

/** What a deploy names: a build, a version or range, a channel, and whether to follow it. */
export interface BuildChoice {
  readonly build_id?: BuildId | undefined
  readonly version?: VersionRange | SemVer | undefined
  readonly channel?: ChannelName | undefined
  readonly follow?: boolean | undefined
}

/** What a deploy asks to follow (a range, a channel, or `latest`), checked against what it names; undefined: nothing. */
export const followOf = Effect.fnUntraced(function*(input: BuildChoice) {
  if (input.follow !== true) return undefined
  if (input.build_id !== undefined) {
    return yield* new InvalidRequest({ details: "A deployment of a build_id cannot follow anything; give a range or a channel with follow." })
  }
  if (input.version !== undefined && Option.isSome(exactVersion(input.version))) {
    return yield* new InvalidRequest({
      details: `Version ${input.version} is exact and never moves; follow a range such as ^${input.version} or a channel.`
    })
  }
  const follow: Follow = input.version !== undefined ? { range: input.version as VersionRange } : { channel: input.channel ?? latestChannel }
  return follow
})

/**
 * The build a deploy names; another account (`crossAccount`) deploys only
 * published builds, and not the build of a yanked version.
 */
export const chooseBuild = Effect.fnUntraced(function*(
  agents: AgentStore["Type"],
  agent: Agent.AgentRecord,
  input: BuildChoice,
  crossAccount: boolean
) {
  const ref = `${agent.account}/${agent.name}`
  if (input.channel !== undefined && (input.build_id !== undefined || input.version !== undefined)) {
    return yield* new InvalidRequest({ details: "Give one of build_id, version and channel: a channel names its own version." })
  }
  if (input.build_id === undefined) {
    return yield* resolve(agents, agent, input.version !== undefined ? { version: input.version } : { channel: input.channel ?? latestChannel })
  }
  const build = yield* agents.findBuild(agent.id, input.build_id).pipe(
    Effect.map(Option.filter((b) => !crossAccount || Option.isSome(b.version))),
    orFail(() => new BuildNotFound({ agent: ref, buildId: input.build_id! }))
  )
  if (input.version !== undefined && Option.getOrUndefined(build.version) !== input.version) {
    return yield* new InvalidRequest({
      details: `Build ${build.build_id} of ${ref} is not version ${input.version}; give one of build_id and version, or both that match.`
    })
  }
  // Other accounts deploy versions, not builds: naming the build of a yanked version is refused to them too.
  return crossAccount ? yield* installable(ref, build) : build
})
