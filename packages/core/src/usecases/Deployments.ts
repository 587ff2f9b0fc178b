/**
 * Deployment use cases: deploy and undeploy agents into cluster namespaces,
 * roll them back, change their settings, read the deployment history, read
 * a deployment's ConfigMaps and restart its pods.
 */
import { DateTime, Effect, Option, type Redacted } from "effect"
import * as Agent from "../model/Agent.js"
import * as Cluster from "../ports/Cluster.js"
import {
  DeploymentId,
  type DeploymentRecord,
  type DeploymentSettings,
  DeploymentStatus,
  describeFollow,
  namespaceFor,
  settingsOf
} from "../model/Deployment.js"
import {
  AccountNotFound,
  AgentNotFound,
  DeploymentNotFound,
  NothingToRollBack,
  SecretsMissing,
  VersionNotFound
} from "../model/Errors.js"
import type { SecretName } from "../model/Secret.js"
import { EventBus } from "../ports/EventBus.js"
import type { AccountId, AccountName, AgentName } from "../model/Ids.js"
import { listOf, viewFor } from "../internal/deploymentViews.js"
import { accountIdNamed, orFail } from "../internal/lookup.js"
import { chooseBuild, deploymentChanged, followOf, resolve, selectorOf } from "../internal/releases.js"
import * as Policy from "../model/Policy.js"
import { audit } from "../internal/audit.js"
import { AccountStore, AgentStore, DeploymentStore, EventLog, IdGenerator, Transactor } from "../ports/Ports.js"
import type { Principal } from "../model/Principal.js"
import * as Tracing from "../runtime/Tracing.js"
import { deployedLine, type DeployInput, type Origin, type RollbackTarget, type SettingsInput } from "./deployments/Inputs.js"
import { namespaceOperations } from "./deployments/Namespaces.js"
import { configMapName, environmentOf, labelsOf, secretName, specFile, workloadOf } from "./deployments/Workload.js"

// What a deploy, a rollback and a settings change are asked, and the audit line of a deploy: deployments/Inputs.ts.
export type { DeployInput, RollbackTarget, SettingsInput } from "./deployments/Inputs.js"

/** Statuses a deployment record takes (see DeploymentStatus): a deploy writes `pending`, the Rollouts service the rest of the rollout. */
export const Status = DeploymentStatus

// The names and the environment a deploy gives the cluster are worked out in deployments/Workload.ts.
export { configMapName, environmentOf, secretName } from "./deployments/Workload.js"

export class Deployments extends Effect.Service<Deployments>()("@hosting/core/Deployments", {
  effect: Effect.gen(function*() {
    const accounts = yield* AccountStore
    const agents = yield* AgentStore
    const store = yield* DeploymentStore
    const log = yield* EventLog
    const bus = yield* EventBus
    const cluster = yield* Cluster.Cluster
    const ids = yield* IdGenerator
    const tx = yield* Transactor

    const accountNamed = (name: AccountName) => accounts.findByName(name).pipe(orFail(() => new AccountNotFound({ account: name })))

    /**
     * Tells the deploying account (and, for a roll forward, the publisher)
     * that a deployment changed; `withSettings` adds the settings (a settings change).
     */
    const changed = (record: DeploymentRecord, now: DateTime.Utc, withSettings = false) =>
      log.append(
        deploymentChanged(
          record,
          record.rolled_forward_from === undefined ? [record.account_id] : [record.account_id, record.publisher_id],
          undefined,
          withSettings ? { settings: { ...settingsOf(record) } } : {}
        ),
        now
      )

    /**
     * The record of a deploy, which supersedes what ran in the namespace,
     * with its event and its audit entry (in the caller's transaction).
     */
    const recordDeployment = Effect.fnUntraced(function*(
      principal: Principal,
      target: { readonly id: AccountId; readonly name: AccountName },
      publisher: { readonly id: AccountId; readonly name: AccountName },
      agent: Agent.AgentRecord,
      build: Agent.Build,
      origin: Origin,
      namespace: string,
      id: DeploymentId,
      overrides: Origin["env"]
    ) {
      const now = yield* DateTime.now
      const live = yield* store.liveInNamespace(namespace)
      for (const previous of live) {
        yield* store.markUndeployed(previous.id, Status.superseded, now)
      }
      yield* store.upsert({
        id,
        account_id: target.id,
        publisher_id: publisher.id,
        agent_name: agent.name,
        build_id: build.build_id,
        namespace,
        // Not yet seen in the cluster: the Rollouts service reads the rollout from here on.
        status: Status.pending,
        deployed_at: now,
        undeployed_at: Option.none(),
        spec: build.spec,
        rolled_back_from: origin.rolled_back_from,
        follow: origin.follow,
        rolled_forward_from: origin.rolled_forward_from,
        // The namespace keeps its settings across deploys, rollbacks and roll forwards: the newest live deployment's.
        concurrent_send: live[0]?.concurrent_send,
        env: overrides
      })
      const stored = yield* store.findById(id).pipe(orFail(() => new DeploymentNotFound({ deployment: id })))
      yield* changed(stored, now)
      yield* audit(accounts, principal, [target.id], "deployment.created", id, deployedLine(origin, publisher.name, agent, build, id, overrides))
      return stored
    })

    /**
     * Runs a build in the deploying account's namespace for the agent: the
     * cluster objects first, then the record that supersedes what ran there,
     * its event and its audit entry.
     */
    const apply = Effect.fnUntraced(function*(
      principal: Principal,
      target: { readonly id: AccountId; readonly name: AccountName },
      publisher: { readonly id: AccountId; readonly name: AccountName },
      agent: Agent.AgentRecord,
      build: Agent.Build,
      origin: Origin
    ) {
      const namespace = namespaceFor(target.name, publisher.name, agent.name)
      const id = DeploymentId.make(`dep-${yield* ids.next}`)
      const labels = labelsOf(id, target.name, publisher.name, agent.name, build)
      const overrides = origin.env !== undefined && Object.keys(origin.env).length > 0 ? origin.env : undefined
      const { plain: env, secrets } = environmentOf(build.spec, overrides)
      // The secrets come from the deploying account; one it lacks stops the deploy before the cluster is touched.
      const wanted = [...new Set(Object.values(secrets))].sort()
      const values = wanted.length === 0 ? new Map<SecretName, Redacted.Redacted<string>>() : yield* accounts.secretValues(target.id, wanted)
      const missing = wanted.filter((name) => !values.has(name))
      if (missing.length > 0) return yield* new SecretsMissing({ account: target.name, names: missing })
      // The cluster first: every call is idempotent, so a failure here writes nothing and a retry is safe.
      yield* cluster.ensureNamespace(namespace, labels)
      // A copy of the values at this deploy: changing a secret later changes no running deployment until it is deployed again.
      if (wanted.length > 0) {
        yield* cluster.applySecret({
          namespace,
          name: secretName(agent.name),
          data: Object.fromEntries(Object.entries(secrets).map(([name, secret]) => [name, values.get(secret)!]))
        }, labels)
      }
      yield* cluster.applyConfigMap(
        new Cluster.ConfigMap({ namespace, name: configMapName(agent.name), data: { [specFile]: build.spec_content, ...env } }),
        labels
      )
      yield* cluster.applyWorkload(workloadOf({ namespace, publisher: publisher.name, agent, build, env, secrets, labels }))
      // Removed only once no workload reads it: values of an earlier deploy do not linger in the namespace.
      if (wanted.length === 0) yield* cluster.removeSecret(namespace, secretName(agent.name))
      const record = yield* tx.withTransaction(recordDeployment(principal, target, publisher, agent, build, origin, namespace, id, overrides))
      yield* bus.publish(record.rolled_forward_from === undefined ? [target.id] : [target.id, publisher.id])
      return record
    })

    /**
     * Deploys an agent into the deploying account's namespace for it (owner
     * or admin of that account); `rolledBackFrom` names the deployment a
     * rollback replaces.
     */
    const place = Tracing.fn("Deployments.deploy")(function*(principal: Principal, input: DeployInput, rolledBackFrom?: DeploymentId) {
      const publisher = yield* accountNamed(input.account).pipe(
        Effect.catchTag("AccountNotFound", () => new AgentNotFound({ agent: `${input.account}/${input.name}` }))
      )
      const target = input.into === undefined || input.into === publisher.name ? publisher : yield* accountNamed(input.into)
      yield* Policy.requireManager(principal, target, "deploying an agent")
      const crossAccount = target.id !== publisher.id
      const notFound = new AgentNotFound({ agent: `${publisher.name}/${input.name}` })
      const agent = yield* agents.findAgent(publisher.id, input.name).pipe(orFail(() => notFound))
      // For another account, an agent with nothing published does not exist.
      if (crossAccount && Agent.publishedOf(yield* agents.listBuilds(agent.id)).length === 0) return yield* notFound
      const follow = yield* followOf(input)
      const build = yield* chooseBuild(agents, agent, input, crossAccount)
      const record = yield* apply(principal, target, publisher, agent, build, { rolled_back_from: rolledBackFrom, follow, env: input.env })
      return viewFor(principal, record)
    })

    /**
     * Rolls every live deployment that follows a range or a channel of the
     * agent forward to what it now names, after `principal` published a
     * version or moved a channel. A deployment whose range or channel names
     * nothing installable, or already runs it, stays; one the cluster
     * refuses stays too (logged). Returns the new deployments.
     */
    const rollForward = Tracing.fn("Deployments.rollForward")(function*(principal: Principal, publisherId: AccountId, agentName: AgentName) {
      const following = yield* store.listFollowing(publisherId, agentName)
      if (following.length === 0) return []
      const agent = yield* agents.findAgent(publisherId, agentName)
      if (Option.isNone(agent)) return []
      const made: Array<DeploymentRecord> = []
      for (const record of following) {
        const follow = record.follow!
        const next = yield* resolve(agents, agent.value, selectorOf(follow)).pipe(Effect.option)
        if (Option.isNone(next) || next.value.build_id === record.build_id) continue
        yield* apply(
          principal,
          { id: record.account_id, name: record.account },
          { id: record.publisher_id, name: record.publisher },
          agent.value,
          next.value,
          { follow, rolled_forward_from: record.id, env: record.env }
        ).pipe(
          Effect.tap((created) => Effect.sync(() => made.push(created))),
          Effect.catchAll((error) =>
            Effect.logWarning(`Deployment ${record.id} follows its ${describeFollow(follow)} but could not roll forward`, error)
          )
        )
      }
      return made
    })

    /** Deploys an agent (see `place`). */
    const deploy = (principal: Principal, input: DeployInput) => place(principal, input)

    /** A deployment the caller may act on: the deploying account's members (managers when `manage`). */
    const deploymentFor = Effect.fnUntraced(function*(principal: Principal, id: DeploymentId, manage: boolean, action?: string) {
      const record = yield* store.findById(id).pipe(orFail(() => new DeploymentNotFound({ deployment: id })))
      const account = yield* accounts.findById(record.account_id).pipe(orFail(() => new DeploymentNotFound({ deployment: id })))
      const refused = Policy.deploymentRefusal(principal, account, id, manage, action)
      if (Option.isSome(refused)) return yield* refused.value
      return record
    })

    /** One deployment (members of the deploying account). */
    const get = Tracing.fn("Deployments.get")(function*(principal: Principal, id: DeploymentId) {
      return viewFor(principal, yield* deploymentFor(principal, id, false))
    })

    /**
     * The live deployments of the caller's accounts (each as `get` shows it:
     * members of the deploying account see it), by id after `after`, at most `limit`.
     */
    const listLive = Tracing.fn("Deployments.listLive")(function*(principal: Principal, after: DeploymentId | undefined, limit: number) {
      return (yield* store.liveOfAccounts(Policy.memberAccounts(principal), after, limit)).map((record) => viewFor(principal, record))
    })

    /** Marks the deployment undeployed, with its event and its audit entry (in the caller's transaction). */
    const endDeployment = Effect.fnUntraced(function*(principal: Principal, id: DeploymentId, record: DeploymentRecord) {
      const now = yield* DateTime.now
      yield* store.markUndeployed(record.id, Status.undeployed, now)
      const stored = yield* store.findById(record.id).pipe(orFail(() => new DeploymentNotFound({ deployment: id })))
      yield* changed(stored, now)
      yield* audit(accounts, principal, [record.account_id], "deployment.undeployed", id, `Undeployed ${id} (namespace ${record.namespace}).`)
      return stored
    })

    /** Ends a deployment and removes its cluster objects; undeploying twice changes nothing. */
    const undeploy = Tracing.fn("Deployments.undeploy")(function*(principal: Principal, id: DeploymentId) {
      const record = yield* deploymentFor(principal, id, true)
      if (Option.isSome(record.undeployed_at)) return viewFor(principal, record)
      const others = (yield* store.liveInNamespace(record.namespace)).filter((d) => d.id !== record.id)
      if (others.length === 0) yield* cluster.removeNamespace(record.namespace)
      const ended = yield* tx.withTransaction(endDeployment(principal, id, record))
      yield* bus.publish([record.account_id])
      return viewFor(principal, ended)
    })

    /** Stores the settings, with their event and their audit entry (in the caller's transaction). */
    const storeSettings = Effect.fnUntraced(function*(
      principal: Principal,
      id: DeploymentId,
      record: DeploymentRecord,
      before: DeploymentSettings,
      input: SettingsInput
    ) {
      const now = yield* DateTime.now
      yield* store.updateSettings(record.id, { concurrent_send: input.concurrent_send })
      const stored = yield* store.findById(record.id).pipe(orFail(() => new DeploymentNotFound({ deployment: id })))
      yield* changed(stored, now, true)
      yield* audit(
        accounts,
        principal,
        [record.account_id],
        "deployment.settings_changed",
        id,
        `Set concurrent_send of ${id} to ${input.concurrent_send} (was ${before.concurrent_send}).`
      )
      return stored
    })

    /**
     * Sets a deployment's settings (owner or admin of the deploying
     * account). A change is audited and appends `deployment.changed` with
     * the settings; the wake-up makes every process read the deployment
     * again before its next send. Setting what is set changes nothing.
     */
    const updateSettings = Tracing.fn("Deployments.updateSettings")(function*(principal: Principal, id: DeploymentId, input: SettingsInput) {
      const record = yield* deploymentFor(principal, id, true, "changing a deployment's settings")
      const before = settingsOf(record)
      if (before.concurrent_send === input.concurrent_send) return before
      const stored = yield* tx.withTransaction(storeSettings(principal, id, record, before, input))
      yield* bus.publish([record.account_id])
      return settingsOf(stored)
    })

    /**
     * Returns a deployment's namespace to a build it ran before (owner or
     * admin of the deploying account): the last build before this
     * deployment's that differs from it, or the build (or version) named,
     * which must be in the namespace's history. The new deployment
     * supersedes whatever runs there and names the one it rolled back.
     */
    const rollback = Tracing.fn("Deployments.rollback")(function*(principal: Principal, id: DeploymentId, target: RollbackTarget) {
      const record = yield* deploymentFor(principal, id, true)
      // Newest first; the deploying account's deployments of the agent all went into this one namespace.
      const history = (yield* store.listForAgent(record.publisher_id, record.agent_name, [record.account_id]))
        .filter((d) => d.namespace === record.namespace)
      const ref = `${record.publisher}/${record.agent_name}`
      let buildId = target.build_id
      if (buildId === undefined && target.version !== undefined) {
        const agent = yield* agents.findAgent(record.publisher_id, record.agent_name).pipe(orFail(() => new AgentNotFound({ agent: ref })))
        const build = yield* agents.findBuildByVersion(agent.id, target.version).pipe(
          orFail(() => new VersionNotFound({ agent: ref, version: target.version! }))
        )
        buildId = build.build_id
      }
      const chosen = buildId === undefined
        ? history.slice(history.findIndex((d) => d.id === record.id) + 1).find((d) => d.build_id !== record.build_id)
        : history.find((d) => d.build_id === buildId)
      if (chosen === undefined) {
        return yield* new NothingToRollBack({
          deployment: id,
          details: buildId === undefined
            ? `Deployment ${id} runs the first build of ${ref} deployed into ${record.namespace}; there is no earlier build to return to.`
            : `Build ${buildId} of ${ref} was never deployed into ${record.namespace}; a rollback returns to a build of the ` +
              "deployment's history (deploy any other build with POST /agents/{account}/{name}/deployments)."
        })
      }
      return yield* place(
        principal,
        // The build with the env it was deployed with; its secrets are read as they are now.
        {
          account: record.publisher,
          name: record.agent_name,
          build_id: chosen.build_id,
          version: target.version,
          into: record.account,
          env: chosen.env
        },
        record.id
      )
    })

    /**
     * The deployments of agent `account/name` the caller may see: those made by
     * the caller's own accounts. Members of the publisher, or of an account
     * that deployed the agent, may ask; anyone else is refused.
     */
    const history = (principal: Principal, account: AccountName, name: AgentName) => {
      const refused = () => Policy.agentActivityRefused(account, name, "deployments")
      return Tracing.withSpan("Deployments.history")(Effect.flatMap(accountIdNamed(accounts, principal, account, refused), (publisher) =>
        Effect.flatMap(store.listForAgent(publisher, name, Policy.memberAccounts(principal)), (visible) =>
          Policy.readsAgentActivity(principal, publisher, visible.length > 0)
            ? Effect.succeed(visible.map((record) => viewFor(principal, record)))
            : refused())))
    }

    const list = listOf(store, accountNamed)

    // Reading a ConfigMap and restarting a pod of a deployment live in deployments/Namespaces.ts.
    const { configMap, restartPod } = yield* namespaceOperations

    return { deploy, get, listLive, undeploy, rollback, rollForward, updateSettings, history, list, configMap, restartPod } as const
  })
}) {}
