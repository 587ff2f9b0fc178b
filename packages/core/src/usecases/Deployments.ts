/**
 * Deployment use cases: deploy and undeploy agents into cluster namespaces,
 * roll them back, change their settings, read the deployment history, read
 * a deployment's ConfigMaps and restart its pods.
 */
import { DateTime, Effect, Option, type Redacted } from "effect"
import type { Account } from "../model/Account.js"
import * as Agent from "../model/Agent.js"
import * as AgentSpec from "../model/AgentSpec.js"
import * as Cluster from "../ports/Cluster.js"
import {
  type ConcurrentSend,
  DeploymentId,
  type DeploymentRecord,
  DeploymentStatus,
  describeFollow,
  type Follow,
  labelKeys,
  labelValue,
  managedByValue,
  namespaceFor,
  settingsOf
} from "../model/Deployment.js"
import {
  AccountNotFound,
  AgentNotFound,
  DeploymentNotFound,
  ConfigMapNotFound,
  NothingToRollBack,
  PodNotFound,
  SecretsMissing,
  VersionNotFound
} from "../model/Errors.js"
import type { EnvOverrides, SecretName } from "../model/Secret.js"
import { EventBus } from "../ports/EventBus.js"
import { type AccountId, type AccountName, type AgentName, type BuildId, type ChannelName, type SemVer, type VersionRange } from "../model/Ids.js"
import { listOf, viewFor } from "../internal/deploymentViews.js"
import { orFail } from "../internal/lookup.js"
import { chooseBuild, deploymentChanged, followOf, resolve, selectorOf } from "../internal/releases.js"
import * as Policy from "../model/Policy.js"
import { audit } from "../internal/audit.js"
import { AccountStore, AgentStore, DeploymentStore, EventLog, IdGenerator, Transactor } from "../ports/Ports.js"
import type { Principal } from "../model/Principal.js"
import * as Tracing from "../runtime/Tracing.js"

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
interface Origin {
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

/** Statuses a deployment record takes (see DeploymentStatus): a deploy writes `pending`, the Rollouts service the rest of the rollout. */
export const Status = DeploymentStatus

/** Name of the ConfigMap that carries the agent's spec and environment. */
export const configMapName = (agent: AgentName) => `${agent}-config`

/** Name of the Secret that carries the values of the secrets a deployment refers to. */
export const secretName = (agent: AgentName) => `${agent}-secrets`

/** The key of the agent's ConfigMap that holds the spec's YAML text. */
const specFile = "agent.yaml"

/**
 * The environment of a deployment: the spec's `env`, with the deploy's own
 * entries in place of those of the same name. Plain values on one side;
 * on the other, env name to the name of the secret it reads.
 */
export const environmentOf = (spec: Agent.SpecMap, overrides: EnvOverrides = {}) => {
  const plain: Record<string, string> = { ...Agent.envOf(spec) }
  const secrets: Record<string, SecretName> = { ...Agent.secretRefsOf(spec) }
  for (const [name, value] of Object.entries(overrides)) {
    delete plain[name]
    delete secrets[name]
    if (typeof value === "string") plain[name] = value
    else secrets[name] = value.secret
  }
  return { plain, secrets }
}

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
     * Runs a build in the deploying account's namespace for the agent: the
     * cluster objects first, then the record that supersedes what ran there,
     * its event and its audit entry.
     */
    const apply = (
      principal: Principal,
      target: { readonly id: AccountId; readonly name: AccountName },
      publisher: { readonly id: AccountId; readonly name: AccountName },
      agent: Agent.AgentRecord,
      build: Agent.Build,
      origin: Origin
    ) =>
      Effect.gen(function*() {
        const namespace = namespaceFor(target.name, publisher.name, agent.name)
        const id = DeploymentId.make(`dep-${yield* ids.next}`)
        const labels = {
          [labelKeys.managedBy]: managedByValue,
          [labelKeys.account]: labelValue(target.name),
          [labelKeys.publisher]: labelValue(publisher.name),
          [labelKeys.agent]: labelValue(agent.name),
          [labelKeys.build]: labelValue(build.build_id),
          [labelKeys.deployment]: labelValue(id)
        }
        const overrides = origin.env !== undefined && Object.keys(origin.env).length > 0 ? origin.env : undefined
        const { plain: env, secrets } = environmentOf(build.spec, overrides)
        // The secrets come from the deploying account; one it lacks stops the deploy before the cluster is touched.
        const wanted = [...new Set(Object.values(secrets))].sort()
        const values = wanted.length === 0 ? new Map<SecretName, Redacted.Redacted<string>>() : yield* accounts.secretValues(target.id, wanted)
        const missing = wanted.filter((name) => !values.has(name))
        if (missing.length > 0) return yield* new SecretsMissing({ account: target.name, names: missing })
        const secretEnv = Object.fromEntries(Object.keys(secrets).map((name) => [name, { name: secretName(agent.name), key: name }]))
        const port = build.spec["port"]
        const replicas = build.spec["replicas"]
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
        yield* cluster.applyWorkload({
          namespace,
          name: agent.name,
          image: Agent.imageOf(agent, build),
          replicas: typeof replicas === "number" && Number.isInteger(replicas) && replicas >= 0 && replicas <= 20 ? replicas : 1,
          port: typeof port === "number" && Number.isInteger(port) && port > 0 && port < 65536 ? Option.some(port) : Option.none(),
          env,
          secretEnv,
          configMap: configMapName(agent.name),
          labels,
          annotations: {
            "hosting.dev/agent-ref": `${publisher.name}/${agent.name}`,
            "hosting.dev/version": Option.getOrElse(build.version, () => "")
          }
        })
        // Removed only once no workload reads it: values of an earlier deploy do not linger in the namespace.
        if (wanted.length === 0) yield* cluster.removeSecret(namespace, secretName(agent.name))
        const record = yield* tx.withTransaction(Effect.gen(function*() {
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
          const how = origin.rolled_back_from !== undefined
            ? `Rolled ${origin.rolled_back_from} back: deployed`
            : origin.rolled_forward_from !== undefined && origin.follow !== undefined
            ? `Rolled ${origin.rolled_forward_from} forward along its ${describeFollow(origin.follow)}: deployed`
            : "Deployed"
          const following = origin.follow === undefined || origin.rolled_forward_from !== undefined
            ? ""
            : `, following its ${describeFollow(origin.follow)}`
          yield* audit(
            accounts,
            principal,
            [target.id],
            "deployment.created",
            id,
            `${how} ${publisher.name}/${agent.name} build ${build.build_id}` +
              `${Option.match(build.version, { onNone: () => "", onSome: (v) => ` (${v})` })} as ${id}${following}.` +
              // Names only: the values (and which secret each reads) stay on the record, for the account's members.
              (overrides === undefined ? "" : ` Env set by the deploy: ${Object.keys(overrides).sort().join(", ")}.`)
          )
          return stored
        }))
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
    const deploymentFor = (principal: Principal, id: DeploymentId, manage: boolean, action?: string) =>
      Effect.gen(function*() {
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

    /** Ends a deployment and removes its cluster objects; undeploying twice changes nothing. */
    const undeploy = Tracing.fn("Deployments.undeploy")(function*(principal: Principal, id: DeploymentId) {
      const record = yield* deploymentFor(principal, id, true)
      if (Option.isSome(record.undeployed_at)) return viewFor(principal, record)
      const others = (yield* store.liveInNamespace(record.namespace)).filter((d) => d.id !== record.id)
      if (others.length === 0) yield* cluster.removeNamespace(record.namespace)
      const ended = yield* tx.withTransaction(Effect.gen(function*() {
        const now = yield* DateTime.now
        yield* store.markUndeployed(record.id, Status.undeployed, now)
        const stored = yield* store.findById(record.id).pipe(orFail(() => new DeploymentNotFound({ deployment: id })))
        yield* changed(stored, now)
        yield* audit(accounts, principal, [record.account_id], "deployment.undeployed", id, `Undeployed ${id} (namespace ${record.namespace}).`)
        return stored
      }))
      yield* bus.publish([record.account_id])
      return viewFor(principal, ended)
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
      const stored = yield* tx.withTransaction(Effect.gen(function*() {
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
      }))
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
    const history = Tracing.fn("Deployments.history")(function*(principal: Principal, account: AccountName, name: AgentName) {
      const refused = () => Policy.agentActivityRefused(account, name, "deployments")
      const publisher = yield* accounts.findByName(account).pipe(orFail(refused))
      const visible = yield* store.listForAgent(publisher.id, name, Policy.memberAccounts(principal))
      if (!Policy.readsAgentActivity(principal, publisher.id, visible.length > 0)) return yield* refused()
      return visible.map((record) => viewFor(principal, record))
    })

    const list = listOf(store, accountNamed)

    /**
     * The deployment behind a namespace, checked against the `account` the
     * caller names: the caller must be a member of it, and the namespace must
     * be that account's.
     */
    const namespaceOf = (principal: Principal, namespace: string, accountName: AccountName) =>
      Effect.gen(function*() {
        const account: Account = yield* accounts.findByName(accountName).pipe(orFail(() => Policy.notMember(accountName)))
        yield* Policy.requireMember(principal, account, "reaching its deployments")
        const record = yield* store.findByNamespace(namespace).pipe(
          orFail(() => new DeploymentNotFound({ deployment: `in namespace ${namespace}` }))
        )
        const foreign = Policy.namespaceRefusal(record, namespace, account)
        if (Option.isSome(foreign)) return yield* foreign.value
        return record
      })

    /** The data of a ConfigMap in a deployment's namespace (members of the owning account). */
    const configMap = Tracing.fn("Deployments.configMap")(function*(
      principal: Principal,
      namespace: string,
      name: string,
      account: AccountName
    ) {
      const record = yield* namespaceOf(principal, namespace, account)
      const found = yield* cluster.readConfigMap(namespace, name).pipe(orFail(() => new ConfigMapNotFound({ namespace, name })))
      if (name !== configMapName(record.agent_name) || Policy.seesAgentEnv(principal, record.publisher_id)) return found
      // The agent's own ConfigMap repeats its spec and env (the running agent reads them in full); outside the
      // agent's account the values are hidden, as in every other view of the spec.
      const env = Agent.envOf(record.spec)
      const data = Object.fromEntries(Object.entries(found.data).map(([key, value]) => [
        key,
        key === specFile ? AgentSpec.render(Agent.withEnvHidden(record.spec)) : Object.hasOwn(env, key) ? Agent.hiddenEnvValue : value
      ]))
      return new Cluster.ConfigMap({ ...found, data })
    })

    /** Deletes a pod so that the cluster recreates it (members of the owning account). */
    const restartPod = Tracing.fn("Deployments.restartPod")(function*(
      principal: Principal,
      namespace: string,
      pod: string,
      account: AccountName
    ) {
      yield* namespaceOf(principal, namespace, account)
      const deleted = yield* cluster.deletePod(namespace, pod)
      if (!deleted) return yield* new PodNotFound({ namespace, pod })
      return { status: "restarting", pod }
    })

    return { deploy, get, undeploy, rollback, rollForward, updateSettings, history, list, configMap, restartPod } as const
  })
}) {}
