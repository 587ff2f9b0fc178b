/**
 * What the members of an account may do inside the namespace of one of its
 * deployments: read a ConfigMap, restart a pod. Part of the Deployments
 * use cases (they are its methods).
 */
import { Effect, Option } from "effect"
import type { Account } from "../../model/Account.js"
import * as Agent from "../../model/Agent.js"
import * as AgentSpec from "../../model/AgentSpec.js"
import { ConfigMapNotFound, DeploymentNotFound, PodNotFound } from "../../model/Errors.js"
import type { AccountName } from "../../model/Ids.js"
import * as Policy from "../../model/Policy.js"
import type { Principal } from "../../model/Principal.js"
import { orFail } from "../../internal/lookup.js"
import * as Cluster from "../../ports/Cluster.js"
import { AccountStore, DeploymentStore } from "../../ports/Ports.js"
import * as Tracing from "../../runtime/Tracing.js"
import { configMapName, specFile } from "./Workload.js"

export const namespaceOperations = Effect.gen(function*() {
  const accounts = yield* AccountStore
  const store = yield* DeploymentStore
  const cluster = yield* Cluster.Cluster

  /**
   * The deployment behind a namespace, checked against the `account` the
   * caller names: the caller must be a member of it, and the namespace must
   * be that account's.
   */
  const namespaceOf = Effect.fnUntraced(function*(principal: Principal, namespace: string, accountName: AccountName) {
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

  return { configMap, restartPod } as const
})
