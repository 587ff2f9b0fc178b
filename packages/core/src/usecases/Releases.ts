/**
 * Release management of an agent's published versions: channels (named
 * pointers to a version, like npm's dist-tags), yanks (a version withdrawn
 * from ranges, channels and `latest`), and publishing, each followed by the
 * deployments that follow a range or a channel rolling forward.
 */
import { DateTime, Effect, Option } from "effect"
import type { Account } from "../model/Account.js"
import * as Agent from "../model/Agent.js"
import { AccountNotFound, AgentNotFound, ChannelNotFound, InvalidRequest, VersionNotFound, VersionYanked } from "../model/Errors.js"
import { type AccountName, type AgentName, type ChannelName, latestChannel, type SemVer } from "../model/Ids.js"
import { audit } from "../internal/audit.js"
import { orFail } from "../internal/lookup.js"
import { buildEventRecipients, deploymentChanged } from "../internal/releases.js"
import * as Policy from "../model/Policy.js"
import type { Principal } from "../model/Principal.js"
import { EventBus } from "../ports/EventBus.js"
import { AccountStore, AgentStore, DeploymentStore, EventLog, Transactor } from "../ports/Ports.js"
import * as Tracing from "../runtime/Tracing.js"
import { Catalog, type PublishInput } from "./Catalog.js"
import { Deployments } from "./Deployments.js"

/** Longest reason a yank may give. */
export const maxYankReasonLength = 500

export class Releases extends Effect.Service<Releases>()("@hosting/core/Releases", {
  effect: Effect.gen(function*() {
    const accounts = yield* AccountStore
    const agents = yield* AgentStore
    const deploymentStore = yield* DeploymentStore
    const log = yield* EventLog
    const bus = yield* EventBus
    const tx = yield* Transactor
    const catalog = yield* Catalog
    const deployments = yield* Deployments

    /** The agent `account/name` for a change by an owner or admin of its account. */
    const managedAgent = Effect.fnUntraced(function*(principal: Principal, account: AccountName, name: AgentName, action: string) {
      const owner: Account = yield* accounts.findByName(account).pipe(orFail(() => new AccountNotFound({ account })))
      yield* Policy.requireManager(principal, owner, action)
      const agent = yield* agents.findAgent(owner.id, name).pipe(orFail(() => new AgentNotFound({ agent: `${account}/${name}` })))
      return agent
    })

    /** The published build of a version, or 404. */
    const publishedBuild = (agent: Agent.AgentRecord, version: SemVer) =>
      agents.findBuildByVersion(agent.id, version).pipe(
        orFail(() => new VersionNotFound({ agent: `${agent.account}/${agent.name}`, version }))
      )

    /** `latest` names itself: it cannot be set or removed. */
    const refuseLatest = (channel: ChannelName, verb: string) =>
      channel === latestChannel
        ? Effect.fail(
          new InvalidRequest({
            details: `Channel latest is implicit: it always names the highest published version that is not yanked, and cannot be ${verb}. ` +
              "Use another name (for example stable or beta)."
          })
        )
        : Effect.void

    /** Appends an agent.build event to the publisher's and every deploying account's stream; returns who to wake. */
    const buildEvent = Effect.fnUntraced(function*(agent: Agent.AgentRecord, data: Record<string, string>, now: DateTime.Utc) {
      const recipients = yield* buildEventRecipients(deploymentStore, agent)
      yield* log.append(recipients.map((account_id) => ({ account_id, type: "agent.build" as const, data: { agent: `${agent.account}/${agent.name}`, ...data } })), now)
      return recipients
    })

    /** Publishes a version (Catalog.publish), then rolls forward the deployments whose range or `latest` it now matches. */
    const publish = Tracing.fn("Releases.publish")(function*(principal: Principal, input: PublishInput) {
      const result = yield* catalog.publish(principal, input)
      if (result.created) {
        const publisher = yield* accounts.findByName(input.account)
        if (Option.isSome(publisher)) yield* deployments.rollForward(principal, publisher.value.id, input.name)
      }
      return result
    })

    /** The channels of an agent as they stand, `latest` first; anyone who may read the agent may read them. */
    const channels = Tracing.fn("Releases.channels")(function*(principal: Option.Option<Principal>, account: AccountName, name: AgentName) {
      const { account_id } = yield* catalog.view(principal, account, name)
      const agent = yield* agents.findAgent(account_id, name).pipe(orFail(() => new AgentNotFound({ agent: `${account}/${name}` })))
      const builds = yield* agents.listBuilds(agent.id)
      const shown: Array<Agent.Channel> = []
      const latest = Agent.installableOf(builds)[0]
      if (latest !== undefined) {
        shown.push(new Agent.Channel({ name: latestChannel, version: Option.getOrThrow(latest.version), build_id: latest.build_id, implicit: true }))
      }
      for (const channel of yield* agents.listChannels(agent.id)) {
        const build = builds.find((b) => Option.getOrUndefined(b.version) === channel.version)
        if (build === undefined) continue
        shown.push(new Agent.Channel({
          name: channel.name,
          version: channel.version,
          build_id: build.build_id,
          implicit: false,
          updated_at: channel.updated_at,
          ...(build.yanked === undefined ? {} : { yanked: build.yanked })
        }))
      }
      return shown
    })

    /** Points the channel at the version, with its audit entry and event (in the caller's transaction); returns who to wake. */
    const moveChannel = Effect.fnUntraced(function*(
      principal: Principal,
      agent: Agent.AgentRecord,
      ref: string,
      build: Agent.Build,
      channel: ChannelName,
      version: SemVer,
      previous: Agent.ChannelRecord | undefined
    ) {
      const now = yield* DateTime.now
      yield* agents.setChannel({ agent_id: agent.id, name: channel, version, updated_at: now })
      yield* audit(
        accounts,
        principal,
        [agent.account_id],
        "agent.channel_set",
        `${ref}#${channel}`,
        previous === undefined
          ? `Created channel ${channel} of ${ref} at ${version}.`
          : `Moved channel ${channel} of ${ref} from ${previous.version} to ${version}.`
      )
      return yield* buildEvent(agent, { build_id: build.build_id, status: "channel_set", channel, version }, now)
    })

    /**
     * Points a channel at a published version that is not yanked (owner or
     * admin), creating the channel when needed; deployments that follow it
     * roll forward (or back: they follow the channel wherever it goes).
     */
    const setChannel = Tracing.fn("Releases.setChannel")(function*(
      principal: Principal,
      account: AccountName,
      name: AgentName,
      channel: ChannelName,
      version: SemVer
    ) {
      yield* refuseLatest(channel, "set")
      const agent = yield* managedAgent(principal, account, name, "moving a channel")
      const ref = `${agent.account}/${agent.name}`
      const build = yield* publishedBuild(agent, version)
      if (build.yanked !== undefined) return yield* new VersionYanked({ agent: ref, version, reason: build.yanked.reason })
      const previous = (yield* agents.listChannels(agent.id)).find((c) => c.name === channel)
      if (previous?.version !== version) {
        const recipients = yield* tx.withTransaction(moveChannel(principal, agent, ref, build, channel, version, previous))
        yield* bus.publish(recipients)
        yield* deployments.rollForward(principal, agent.account_id, agent.name)
      }
      const shown = yield* channels(Option.some(principal), account, name)
      return shown.find((c) => c.name === channel)!
    })

    /**
     * Removes the channel, with its audit entry, the warnings of the
     * deployments that followed it and its event (in the caller's
     * transaction); returns who to wake.
     */
    const dropChannel = Effect.fnUntraced(function*(principal: Principal, agent: Agent.AgentRecord, ref: string, channel: ChannelName) {
      if (!(yield* agents.removeChannel(agent.id, channel))) return yield* new ChannelNotFound({ agent: ref, channel })
      const now = yield* DateTime.now
      yield* audit(accounts, principal, [agent.account_id], "agent.channel_removed", `${ref}#${channel}`, `Removed channel ${channel} of ${ref}.`)
      const orphans = (yield* deploymentStore.listFollowing(agent.account_id, agent.name))
        .filter((d) => d.follow !== undefined && "channel" in d.follow && d.follow.channel === channel)
      const warning = `Channel ${channel} of ${ref} was removed: this deployment keeps running its build and no longer rolls forward.`
      yield* log.append(orphans.flatMap((d) => deploymentChanged(d, [d.account_id], warning)), now)
      const told = yield* buildEvent(agent, { status: "channel_removed", channel }, now)
      return [...new Set([...told, ...orphans.map((d) => d.account_id)])]
    })

    /**
     * Removes a channel (owner or admin). Deployments that followed it keep
     * running what they run and are told, with a warning, that it is gone.
     */
    const removeChannel = Tracing.fn("Releases.removeChannel")(function*(
      principal: Principal,
      account: AccountName,
      name: AgentName,
      channel: ChannelName
    ) {
      yield* refuseLatest(channel, "removed")
      const agent = yield* managedAgent(principal, account, name, "removing a channel")
      const ref = `${agent.account}/${agent.name}`
      const recipients = yield* tx.withTransaction(dropChannel(principal, agent, ref, channel))
      yield* bus.publish(recipients)
    })

    /**
     * Yanks the build (or undoes its yank), with its audit entry, the
     * warnings of the deployments that run it and its event (in the
     * caller's transaction); returns who to wake.
     */
    const storeYank = Effect.fnUntraced(function*(
      principal: Principal,
      agent: Agent.AgentRecord,
      ref: string,
      build: Agent.Build,
      version: SemVer,
      reason: Option.Option<string>
    ) {
      const now = yield* DateTime.now
      yield* agents.yankBuild({ agent_id: agent.id, build_id: build.build_id, reason, now })
      const running = yield* deploymentStore.liveOfBuild(agent.account_id, agent.name, build.build_id)
      if (Option.isSome(reason)) {
        yield* audit(accounts, principal, [agent.account_id], "agent.yanked", `${ref}@${version}`, `Yanked ${version} of ${ref}: ${reason.value}`)
        const warning = `Version ${version} of ${ref}, which this deployment runs, was yanked: ${reason.value}. ` +
          "It keeps running; deploy another version to move off it."
        yield* log.append(running.flatMap((d) => deploymentChanged(d, [d.account_id], warning)), now)
      } else {
        yield* audit(accounts, principal, [agent.account_id], "agent.unyanked", `${ref}@${version}`, `Undid the yank of ${version} of ${ref}.`)
      }
      const told = yield* buildEvent(agent, {
        build_id: build.build_id,
        status: Option.isSome(reason) ? "yanked" : "unyanked",
        version,
        ...(Option.isSome(reason) ? { reason: reason.value } : {})
      }, now)
      return [...new Set([...told, ...running.map((d) => d.account_id)])]
    })

    /**
     * Yanks a published version with a reason (owner or admin), or undoes a
     * yank (`reason` none). A yanked version is passed by ranges and
     * `latest`, refused by channels and exact deploys; deployments running it
     * keep running and get a `deployment.changed` event with a warning.
     * Undoing a yank lets followers roll forward to it again.
     */
    const yank = Tracing.fn("Releases.yank")(function*(
      principal: Principal,
      account: AccountName,
      name: AgentName,
      version: SemVer,
      reason: Option.Option<string>
    ) {
      const agent = yield* managedAgent(principal, account, name, Option.isSome(reason) ? "yanking a version" : "undoing a yank")
      const ref = `${agent.account}/${agent.name}`
      const build = yield* publishedBuild(agent, version)
      const unchanged = Option.match(reason, {
        onNone: () => build.yanked === undefined,
        onSome: (text) => build.yanked?.reason === text
      })
      if (!unchanged) {
        const recipients = yield* tx.withTransaction(storeYank(principal, agent, ref, build, version, reason))
        yield* bus.publish(recipients)
        if (Option.isNone(reason)) yield* deployments.rollForward(principal, agent.account_id, agent.name)
      }
      const updated = yield* publishedBuild(agent, version)
      return Agent.versionView(updated, true)
    })

    return { publish, channels, setChannel, removeChannel, yank } as const
  })
}) {}
