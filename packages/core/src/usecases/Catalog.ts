/**
 * The catalog use cases: register and publish builds, read agents and the
 * public catalog, and the configuration of the latest build.
 */
import { DateTime, Effect, Option } from "effect"
import type { Account } from "../model/Account.js"
import * as Agent from "../model/Agent.js"
import { AgentConfig, type AgentRecord, Build, type ValidationWarning } from "../model/Agent.js"
import * as AgentSpec from "../model/AgentSpec.js"
import { AccountNotFound, AgentNotFound, BuildAlreadyPublished, BuildNotFound, VersionAlreadyPublished } from "../model/Errors.js"
import type { AgentBuildEvent } from "../model/Event.js"
import { type AccountId, type AccountName, AgentId, type AgentName, type BuildId, type SemVer } from "../model/Ids.js"
import { orFail } from "../internal/lookup.js"
import { buildEventRecipients } from "../internal/releases.js"
import * as Policy from "../model/Policy.js"
import { EventBus } from "../ports/EventBus.js"
import { audit } from "../internal/audit.js"
import { AccountStore, AgentStore, type CatalogQuery, DeploymentStore, EventLog, IdGenerator, Transactor } from "../ports/Ports.js"
import type { Principal } from "../model/Principal.js"
import * as Tracing from "../runtime/Tracing.js"
import * as Trusted from "../model/Trusted.js"

/** Input of a registration (interface.md register body plus the path). */
export interface RegisterInput {
  readonly account: AccountName
  readonly name: AgentName
  readonly build_id: BuildId
  readonly registry: string
  readonly spec_content: string
  readonly readme?: string | undefined
}

/** Input of a publication. */
export interface PublishInput {
  readonly account: AccountName
  readonly name: AgentName
  readonly build_id: BuildId
  readonly version: SemVer
}

const agentRef = (account: string, name: string) => `${account}/${name}`

/** Register, publish and read agents. */
export class Catalog extends Effect.Service<Catalog>()("@hosting/core/Catalog", {
  effect: Effect.gen(function*() {
    const accounts = yield* AccountStore
    const agents = yield* AgentStore
    const events = yield* EventLog
    const ids = yield* IdGenerator
    const tx = yield* Transactor
    const deployments = yield* DeploymentStore
    const bus = yield* EventBus

    const accountNamed = (name: AccountName) =>
      accounts.findByName(name).pipe(orFail(() => new AccountNotFound({ account: name })))

    const agentOf = (account: Account, name: AgentName) =>
      agents.findAgent(account.id, name).pipe(orFail(() => new AgentNotFound({ agent: agentRef(account.name, name) })))

    /** Appends an agent.build event to every recipient's log; returns the recipients to wake after commit. */
    const emitBuildEvent = Effect.fnUntraced(function*(agent: AgentRecord, payload: AgentBuildEvent, now: DateTime.Utc) {
      const recipients = yield* buildEventRecipients(deployments, agent)
      yield* events.append(
        recipients.map((account_id) => ({ account_id, type: "agent.build" as const, data: { ...payload } })),
        now
      )
      return recipients
    })

    /** Runs a change in one transaction, then wakes the event-stream subscribers of the accounts it names. */
    const commitAndSignal = <A, E, R>(change: Effect.Effect<{ readonly result: A; readonly recipients: ReadonlyArray<AccountId> }, E, R>) =>
      tx.withTransaction(change).pipe(
        Effect.tap(({ recipients }) => bus.publish(recipients)),
        Effect.map(({ result }) => result)
      )

    /** The change a registration commits. */
    const registerChange = Effect.fnUntraced(function*(principal: Principal, input: RegisterInput) {
      const account = yield* accountNamed(input.account)
      yield* Policy.requireManager(principal, account, "registering a build")
      const spec = yield* AgentSpec.parse(input.spec_content)
      const warnings: ReadonlyArray<ValidationWarning> = AgentSpec.validate(spec, {
        name: input.name,
        registry: input.registry
      })
      const now = yield* DateTime.now
      const existing = yield* agents.findAgent(account.id, input.name)
      const agentId = Option.isSome(existing) ? existing.value.id : AgentId.make(yield* ids.next)
      const agent = yield* agents.upsertAgent({
        id: agentId,
        account_id: account.id,
        name: input.name,
        registry: input.registry,
        now
      })
      const previous = yield* agents.findBuild(agent.id, input.build_id)
      yield* agents.upsertBuild(
        new Build({
          agent_id: agent.id,
          build_id: input.build_id,
          spec,
          spec_content: input.spec_content,
          readme: input.readme ?? "",
          validation_warnings: warnings,
          version: Option.flatMap(previous, (b) => b.version),
          published_at: Option.flatMap(previous, (b) => b.published_at),
          registered_at: Option.match(previous, { onNone: () => now, onSome: (b) => b.registered_at }),
          updated_at: now
        })
      )
      const recipients = yield* emitBuildEvent(agent, {
        agent: agentRef(account.name, agent.name),
        build_id: input.build_id,
        status: Option.isSome(previous) ? "updated" : "registered"
      }, now)
      const result = {
        account: account.name,
        name: agent.name,
        build_id: input.build_id,
        created: Option.isNone(previous),
        validation_warnings: warnings
      }
      return { result, recipients }
    })

    /** Registers a build, or updates an existing one (interface.md: register is also update). */
    const register = Tracing.fn("Catalog.register")(function*(principal: Principal, input: RegisterInput) {
      return yield* commitAndSignal(registerChange(principal, input))
    })

    /** The change a publication commits. */
    const publishChange = Effect.fnUntraced(function*(principal: Principal, input: PublishInput) {
      const account = yield* accountNamed(input.account)
      yield* Policy.requireManager(principal, account, "publishing a version")
      const agent = yield* agentOf(account, input.name)
      const ref = agentRef(account.name, agent.name)
      const build = yield* agents.findBuild(agent.id, input.build_id).pipe(
        orFail(() => new BuildNotFound({ agent: ref, buildId: input.build_id }))
      )
      if (Option.isSome(build.version)) {
        if (build.version.value === input.version) {
          const result = { account: account.name, name: agent.name, build_id: build.build_id, version: input.version, created: false }
          return { result, recipients: [] }
        }
        return yield* new BuildAlreadyPublished({ agent: ref, buildId: build.build_id, version: build.version.value })
      }
      const holder = yield* agents.findBuildByVersion(agent.id, input.version)
      if (Option.isSome(holder)) {
        return yield* new VersionAlreadyPublished({ agent: ref, version: input.version, buildId: holder.value.build_id })
      }
      const now = yield* DateTime.now
      yield* agents.publishBuild({ agent_id: agent.id, build_id: build.build_id, version: input.version, now })
      yield* audit(accounts, principal, [account.id], "agent.published", `${ref}@${input.version}`, `Published build ${build.build_id} of ${ref} as ${input.version}.`)
      const recipients = yield* emitBuildEvent(agent, {
        agent: ref,
        build_id: build.build_id,
        status: "published",
        version: input.version
      }, now)
      const result = { account: account.name, name: agent.name, build_id: build.build_id, version: input.version, created: true }
      return { result, recipients }
    })

    /** Gives a build its semver version; the same version for the same build again changes nothing. */
    const publish = Tracing.fn("Catalog.publish")(function*(principal: Principal, input: PublishInput) {
      return yield* commitAndSignal(publishChange(principal, input))
    })

    /**
     * An agent with the versions the caller may see: members of the account
     * see every build, everyone else only published versions. An agent with
     * nothing visible does not exist for the caller.
     */
    /** An agent as the caller may see it, with the id of its account (for caches keyed by account). */
    const view = Tracing.fn("Catalog.view")(function*(principal: Option.Option<Principal>, account: AccountName, name: AgentName) {
      // Built only when needed: an error captures a stack trace, which costs more than the lookups.
      const notFound = () => new AgentNotFound({ agent: agentRef(account, name) })
      const owner = yield* accounts.findByName(account)
      if (Option.isNone(owner)) return yield* notFound()
      const agent = yield* agents.findAgent(owner.value.id, name)
      if (Option.isNone(agent)) return yield* notFound()
      const builds = yield* agents.listBuilds(agent.value.id)
      const member = Policy.isMember(principal, owner.value)
      const visible = member ? builds : Agent.publishedOf(builds)
      if (visible.length === 0) return yield* notFound()
      // Views of stored records: the schema checked them on the way in, and the HTTP layer encodes them with it.
      const shown = Trusted.make(Agent.Agent, {
        account: owner.value.name,
        name: agent.value.name,
        registry: agent.value.registry,
        versions: visible.map((build) => Agent.versionView(build, member))
      })
      return { agent: shown, account_id: owner.value.id }
    })

    /** An agent as the caller may see it: members see every build, others the published versions. */
    const get = (principal: Option.Option<Principal>, account: AccountName, name: AgentName) =>
      Effect.map(view(principal, account, name), (v) => v.agent)

    /** The public catalog: agents with at least one published version. */
    const list = Tracing.fn("Catalog.list")(function*(query: CatalogQuery) {
      return yield* agents.listPublished(query)
    })

    /**
     * What is needed to deploy the latest build: for members the most recently
     * registered build, for other callers the highest published version.
     */
    const config = Tracing.fn("Catalog.config")(function*(principal: Principal, account: AccountName, name: AgentName) {
      const owner = yield* accountNamed(account).pipe(
        Effect.catchTag("AccountNotFound", () => new AgentNotFound({ agent: agentRef(account, name) }))
      )
      const agent = yield* agentOf(owner, name)
      const builds = yield* agents.listBuilds(agent.id)
      const member = Policy.isMember(Option.some(principal), owner)
      // Outside the account, the highest version that is not yanked (or, when every one is, the highest).
      const published = Agent.publishedOf(builds)
      const installable = Agent.installableOf(builds)
      const candidates = member ? builds : installable.length > 0 ? installable : published
      const latest = candidates[0]
      if (latest === undefined) {
        return yield* member
          ? new BuildNotFound({ agent: agentRef(owner.name, agent.name), buildId: "" })
          : new AgentNotFound({ agent: agentRef(owner.name, agent.name) })
      }
      // A deployer outside the account learns which variables the agent takes, never their values.
      const spec = member ? latest.spec : Agent.withEnvHidden(latest.spec)
      return new AgentConfig({
        account: owner.name,
        name: agent.name,
        build_id: latest.build_id,
        version: Option.getOrUndefined(latest.version),
        registry: agent.registry,
        image: Agent.imageOf(agent, latest),
        spec,
        env: Agent.envOf(spec)
      })
    })

    return { register, publish, get, view, list, config } as const
  })
}) {}
